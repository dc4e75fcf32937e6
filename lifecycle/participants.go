package lifecycle

import (
	"context"
	"time"
)

// InFlight counts work in progress on a server. Fields a server does not have
// stay 0.
type InFlight struct {
	Requests int64 `json:"requests"` // HTTP requests (including HTTP/2 streams)
	Calls    int64 `json:"calls"`    // unary gRPC calls
	Streams  int64 `json:"streams"`  // streaming gRPC calls
	Hijacked int64 `json:"hijacked"` // hijacked HTTP connections (WebSocket)
	Work     int64 `json:"work"`     // units of background work (workdrain: queue messages, loop ticks)
}

// Total is the sum of all counts.
func (f InFlight) Total() int64 { return f.Requests + f.Calls + f.Streams + f.Hijacked + f.Work }

// add returns the field-wise sum of f and g.
func (f InFlight) add(g InFlight) InFlight {
	return InFlight{f.Requests + g.Requests, f.Calls + g.Calls, f.Streams + g.Streams, f.Hijacked + g.Hijacked, f.Work + g.Work}
}

// Server is a participant that owns listeners: an HTTP or gRPC server
// (httpdrain, grpcdrain); or background work with no listener (workdrain),
// for which "listeners" are the intake of new work. The lifecycle calls its
// methods in this order:
//
//	Serve (in its own goroutine, after warm-up succeeded, before READY)
//	LameDuck (at the drain's start, t0)
//	CloseListeners (when the propagation window ends)
//	AwaitIdle (bounded by budget.Timings.DrainTimeout)
//	ForceClose (only if AwaitIdle returned an error)
//
// If the drain starts before warm-up finished, Serve is never called and
// neither are the others. A server reports each request's arrival
// through the ServerHooks that Serve receives, so that the propagation
// window can wait for quiet.
//
// The drain bounds each call itself, never trusting the server to: LameDuck,
// CloseListeners, InFlight and ForceClose get 1s each, AwaitIdle its
// context's deadline; a call still running 100ms past its bound is
// abandoned (it keeps its goroutine), logged as "drainkit: participant call
// abandoned" with the participant, the call and waited_ms, and the drain
// goes on (an abandoned AwaitIdle counts as not idle).
//
// A Server may also have the method Routed() bool, reporting whether
// consumers route work to it over the network (through a registry, a load
// balancer or a Kubernetes Service); one without it counts as routed.
// workdrain's Worker reports false: its work comes from a queue or a clock.
// A drain holds the propagation window only while the instance is
// discoverable: it has a registrar, or a routed server. Otherwise (a process
// that only runs workers and registers nowhere) nothing would notice the
// window, so the drain skips it, whatever propagation.min says, and closes
// the listeners right after t0 (DESIGN.md section 4).
type Server interface {
	// Serve accepts and serves connections, reporting its traffic to h. It
	// blocks until CloseListeners has been called, then returns nil. Any other return is a failure: the
	// lifecycle starts a drain and Run exits with code 1.
	Serve(h ServerHooks) error
	// LameDuck keeps serving but asks clients to move: HTTP/1.1 responses
	// carry Connection: close, HTTP/2 and gRPC connections get GOAWAY, and
	// long-lived handlers get their drain signal. It must return promptly.
	LameDuck()
	// CloseListeners stops accepting connections and returns promptly.
	CloseListeners() error
	// AwaitIdle blocks until no in-flight work remains (nil) or ctx is done
	// (ctx.Err()). It must return as soon as the last work finishes.
	AwaitIdle(ctx context.Context) error
	// ForceClose closes every remaining connection and returns how many
	// requests, calls, streams or hijacked connections were cut.
	ForceClose() int
	// InFlight reports the work in progress now.
	InFlight() InFlight
}

// Registrar announces the instance to a service registry (registry/consul,
// registry/etcd, or registrytest.Memory in tests). The lifecycle calls Sync from
// one goroutine, one call at a time, with the latest READY or EJECTED
// transition (latest wins: intermediate transitions may be skipped); it
// never calls Sync once the drain has started, and cancels a running Sync's
// context at the drain's start. Deregister is called once at the drain's
// start if Sync was ever called (a Sync still running counts: it may have
// written the instance), with a deadline; a Registrar retries within it.
// Errors are logged and recorded in the timeline; they never block the
// drain.
//
// The lifecycle bounds every call itself, never trusting the registrar to
// honour its context: it waits for a Sync running at the drain's start up to
// 500ms after cancelling it, for Deregister up to its deadline and for
// Confirm up to the window's end, each plus 100ms; then the call is
// abandoned (it keeps its goroutine), logged as "drainkit: participant call
// abandoned" with the participant, the call and waited_ms, and the drain
// goes on. So Deregister may run while an abandoned Sync still does: the
// registrar must make the deregistration win, as registry/consul and
// registry/etcd do (Deregister stops their worker first, and a later Sync
// returns registry.ErrDeregistered).
type Registrar interface {
	// Sync brings the registry in line with t.To: register the instance on
	// the first READY (with t.At as its READY time, for consumers' slow
	// start); on EJECTED take it out of discovery while keeping the
	// registration, so READY can bring it back (a Consul check critical, or
	// maintenance mode when t.Cause is CauseOperator; an etcd key deleted
	// while its lease is kept alive); on READY again put it back.
	Sync(ctx context.Context, t Transition) error
	// Deregister removes the instance from the registry.
	Deregister(ctx context.Context) error
}

// DeregistrationConfirmer is an optional Registrar extension: Confirm blocks
// until the registry no longer lists the instance as passing, or ctx is done.
// The lifecycle calls it once Deregister has returned, whether or not it
// succeeded (a failed deregistration can still end in the registry dropping
// the instance, e.g. when its TTL check expires), concurrently with the
// propagation window, cancels ctx when the window ends, and records
// StepConfirmed with Confirm's error.
type DeregistrationConfirmer interface {
	Confirm(ctx context.Context) error
}

// StatusDetailer is an optional Registrar extension: StatusDetail returns a
// JSON-encodable snapshot (instance ID, health, last error; never a secret)
// shown in GET /state as registry[].detail. It must not block on the registry.
type StatusDetailer interface {
	StatusDetail() any
}

// CheckResult is the cached outcome of a readiness check's last run (AddCheck).
type CheckResult struct {
	Name     string        `json:"name"`
	OK       bool          `json:"ok"`
	Err      string        `json:"error,omitempty"`
	At       time.Time     `json:"at"`
	Duration time.Duration `json:"duration_ns"`
}

// Observer receives every transition and every drain step, synchronously, in
// the goroutine that made the change and outside the lifecycle's locks. Unlike
// Subscribe, it sees every event, and in order for one drain: OnTransition to
// DRAINING before the first OnDrainStep, every step before OnTransition to
// STOPPED (StepConfirmed may come before or after StepWindowEnded). It must
// return quickly and must not call back into methods that change state.
// Telemetry uses it.
type Observer interface {
	OnTransition(Transition)
	OnDrainStep(tl Timeline, s Step)
}
