// Package syncx holds drainkit's shared low-level concurrency primitives, one
// concept per file: the cache-line pad (pad.go), the wake-up channel
// (wake.go), the striped in-flight counter (counter.go), the AwaitIdle loop
// (idle.go), the bounded wait (wait.go) and a monotonic phase with a channel
// per phase (phase.go).
package syncx
