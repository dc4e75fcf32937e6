// Package regworker holds what registry/consul and registry/etcd share of
// their registrar: the one worker goroutine (started by the first READY,
// kicked by each Sync, stepped every heartbeat or keep-alive period, stopped
// by Deregister or Close), the wait of Sync for the worker's outcome, the
// deregistration retry with backoff, and the failure-streak logging. What
// each registrar does in a step, and how it deregisters, stays in its own
// package.
package regworker
