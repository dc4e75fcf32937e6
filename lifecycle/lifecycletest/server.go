// Package lifecycletest provides a fake lifecycle.Server for testing a
// service's own wiring (its warm-up and stop hooks, registrars, probes, the
// exit code it derives from Run) without sockets: in-flight work is begun
// and ended by the test, and every call the lifecycle makes is recorded. It
// is a test double, not a server: it serves nothing.
package lifecycletest

import (
	"context"
	"sync"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/lifecycle"
)

// Names of the lifecycle.Server methods, as recorded by Server.Calls.
const (
	CallServe          = "Serve"
	CallLameDuck       = "LameDuck"
	CallCloseListeners = "CloseListeners"
	CallAwaitIdle      = "AwaitIdle"
	CallForceClose     = "ForceClose"
)

type phase int32

const (
	serving  phase = iota
	lameDuck       // LameDuck ran: Draining is closed
	closed         // CloseListeners or ForceClose ran
	finished       // AwaitIdle succeeded or ForceClose ran: Serve returns
)

// Server is a fake lifecycle.Server with controllable in-flight work.
// Create it with NewServer; all methods are safe for concurrent use. Like
// httpdrain's and grpcdrain's servers, its Serve returns nil once the drain
// is over for it (AwaitIdle succeeded or ForceClose ran), or the error
// given to Fail.
type Server struct {
	phase  *syncx.Phase[phase]
	wake   syncx.Wake
	failed chan error
	served chan struct{} // closed when Serve is first called
	once   sync.Once

	mu     sync.Mutex
	calls  []string
	work   lifecycle.InFlight
	forced int
}

// NewServer returns a Server with nothing in flight.
func NewServer() *Server {
	return &Server{phase: syncx.NewPhase(finished), wake: syncx.NewWake(), failed: make(chan error, 1), served: make(chan struct{})}
}

// Begin starts one piece of in-flight work, counted in InFlight as the
// field that add selects (e.g. lifecycle.InFlight{Requests: 1}), and returns
// the function that ends it; calling that more than once has no further
// effect. Work still running at ForceClose is counted as cut.
func (s *Server) Begin(add lifecycle.InFlight) (end func()) {
	s.mu.Lock()
	s.work = s.work.Add(add)
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.work = s.work.Add(lifecycle.InFlight{Requests: -add.Requests, Calls: -add.Calls, Streams: -add.Streams, Hijacked: -add.Hijacked})
			s.mu.Unlock()
			s.wake.Notify()
		})
	}
}

// Fail makes Serve return err, as a server whose listener failed would.
func (s *Server) Fail(err error) {
	select {
	case s.failed <- err:
	default:
	}
}

// Calls returns the lifecycle.Server methods called so far, in order.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

// Serving returns a channel closed when the lifecycle has called Serve. The
// lifecycle calls Serve in a goroutine of its own, which may run after
// READY: wait for it before a drain to get a fixed order of calls.
func (s *Server) Serving() <-chan struct{} { return s.served }

// Draining returns a channel closed when LameDuck is called (t0).
func (s *Server) Draining() <-chan struct{} { return s.phase.Done(lameDuck) }

func (s *Server) record(call string) {
	s.mu.Lock()
	s.calls = append(s.calls, call)
	s.mu.Unlock()
}

// Serve blocks until the drain is over for this server, then returns nil,
// or returns the error given to Fail.
func (s *Server) Serve() error {
	s.record(CallServe)
	s.once.Do(func() { close(s.served) })
	select {
	case <-s.phase.Done(finished):
		return nil
	case err := <-s.failed:
		return err
	}
}

// LameDuck closes the Draining channel.
func (s *Server) LameDuck() {
	s.record(CallLameDuck)
	s.phase.Advance(lameDuck)
}

// CloseListeners records the call; it returns nil.
func (s *Server) CloseListeners() error {
	s.record(CallCloseListeners)
	s.phase.Advance(closed)
	return nil
}

// AwaitIdle returns nil as soon as no work begun with Begin is running, or
// ctx.Err() when ctx is done first.
func (s *Server) AwaitIdle(ctx context.Context) error {
	s.record(CallAwaitIdle)
	if err := syncx.AwaitIdle(ctx, s.wake, func() bool { return s.InFlight().Total() == 0 }); err != nil {
		return err
	}
	s.phase.Advance(finished)
	return nil
}

// ForceClose returns the work still running (it keeps counting in
// InFlight until its end function is called) and ends the drain.
func (s *Server) ForceClose() int {
	s.record(CallForceClose)
	n := int(s.InFlight().Total())
	s.mu.Lock()
	s.forced += n
	s.mu.Unlock()
	s.phase.Advance(finished)
	return n
}

// ForceClosed returns the total that ForceClose has reported.
func (s *Server) ForceClosed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.forced
}

// InFlight reports the work begun and not yet ended.
func (s *Server) InFlight() lifecycle.InFlight {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.work
}

var _ lifecycle.Server = (*Server)(nil)
