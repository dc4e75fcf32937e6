// Package syncx holds drainkit's shared low-level concurrency primitives, one
// concept per file: the cache-line pad (pad.go), the wake-up channel
// (wake.go), the striped in-flight counter (counter.go), the AwaitIdle loop
// (idle.go), the bounded wait (wait.go) and a monotonic phase with a channel
// per phase (phase.go). Package lifecycle may import nothing of drainkit's,
// so it keeps its own copy of the bounded wait.
package syncx
