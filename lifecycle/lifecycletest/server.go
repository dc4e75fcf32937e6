// Package lifecycletest provides a fake lifecycle.Server, for testing a
// service's wiring and its drain without sockets, in the spirit of
// tableflip's testing fake and registrytest.Memory (the fake Registrar).
//
// Out of scope: it speaks no protocol; to test HTTP or gRPC behaviour through
// a drain (Connection: close, GOAWAY), use httpdrain or grpcdrain on a
// 127.0.0.1 listener.
package lifecycletest

import (
	"context"
	"slices"
	"sync"

	"github.com/drainkit/drainkit/lifecycle"
)

// Names of the calls Server records, in the order the lifecycle makes them.
const (
	CallLameDuck       = "LameDuck"
	CallCloseListeners = "CloseListeners"
	CallAwaitIdle      = "AwaitIdle"
	CallForceClose     = "ForceClose"
)

// Server is a fake lifecycle.Server. Its in-flight work is what the test
// starts with Begin; AwaitIdle returns once all of it has ended, and
// ForceClose cuts what is left. Serve blocks until CloseListeners. Create it
// with NewServer; all methods are safe for concurrent use.
type Server struct {
	serveErr error

	serving, closed chan struct{}
	serveOnce       sync.Once
	closeOnce       sync.Once

	mu       sync.Mutex
	hooks    lifecycle.ServerHooks // from Serve
	calls    []string
	inFlight map[*int]struct{} // one key per request begun and not yet ended or cut
	idle     chan struct{}     // closed while inFlight is empty
}

// NewServer returns a Server with no work in flight. Once the lifecycle has
// called Serve, Begin reports each request to its ServerHooks.Arrived, as a
// real server does, so late requests keep the propagation window open.
func NewServer() *Server {
	s := &Server{serving: make(chan struct{}), closed: make(chan struct{}),
		inFlight: map[*int]struct{}{}, idle: make(chan struct{})}
	close(s.idle)
	return s
}

// FailServe makes Serve return err at once (err not nil), as a server whose
// listener broke: the lifecycle then starts a drain and Run exits with code 1.
// Call it before Run.
func (s *Server) FailServe(err error) { s.serveErr = err }

// Begin starts one request and returns end, which finishes it; calling end
// again, or after ForceClose cut the request, does nothing.
func (s *Server) Begin() (end func()) {
	key := new(int)
	s.mu.Lock()
	if s.hooks != nil {
		s.hooks.Arrived(lifecycle.Caller{})
	}
	if len(s.inFlight) == 0 {
		s.idle = make(chan struct{})
	}
	s.inFlight[key] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.endLocked(key)
	}
}

// endLocked ends the request key if it is still in flight. s.mu is held.
func (s *Server) endLocked(key *int) {
	if _, ok := s.inFlight[key]; !ok {
		return
	}
	delete(s.inFlight, key)
	if len(s.inFlight) == 0 {
		close(s.idle)
	}
}

// Calls returns the calls the lifecycle made, in order, by their Call names.
// Serve is not among them: it runs in its own goroutine, so where it falls
// among the others is up to the scheduler; see Serving.
func (s *Server) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Serving returns a channel closed once Serve has been called: from then on,
// Begin reports to the lifecycle's ServerHooks.
func (s *Server) Serving() <-chan struct{} { return s.serving }

// Closed returns a channel closed once CloseListeners has been called.
func (s *Server) Closed() <-chan struct{} { return s.closed }

func (s *Server) record(call string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, call)
}

// Serve implements lifecycle.Server: it returns the FailServe error at once,
// or nil once CloseListeners was called.
func (s *Server) Serve(h lifecycle.ServerHooks) error {
	s.mu.Lock()
	s.hooks = h
	s.mu.Unlock()
	s.serveOnce.Do(func() { close(s.serving) })
	if s.serveErr != nil {
		return s.serveErr
	}
	<-s.closed
	return nil
}

// LameDuck implements lifecycle.Server; it only records the call.
func (s *Server) LameDuck() { s.record(CallLameDuck) }

// CloseListeners implements lifecycle.Server: Serve returns.
func (s *Server) CloseListeners() error {
	s.record(CallCloseListeners)
	s.closeOnce.Do(func() { close(s.closed) })
	return nil
}

// AwaitIdle implements lifecycle.Server: nil once no request is in flight,
// or ctx.Err().
func (s *Server) AwaitIdle(ctx context.Context) error {
	s.record(CallAwaitIdle)
	s.mu.Lock()
	idle := s.idle
	s.mu.Unlock()
	for {
		select {
		case <-idle:
			s.mu.Lock()
			idle = s.idle // a request may have begun since
			n := len(s.inFlight)
			s.mu.Unlock()
			if n == 0 {
				return nil
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ForceClose implements lifecycle.Server: it cuts every request in flight
// and returns how many.
func (s *Server) ForceClose() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, CallForceClose)
	n := len(s.inFlight)
	for key := range s.inFlight {
		s.endLocked(key)
	}
	return n
}

// InFlight implements lifecycle.Server: the requests begun and not yet ended
// or cut, as InFlight.Requests.
func (s *Server) InFlight() lifecycle.InFlight {
	s.mu.Lock()
	defer s.mu.Unlock()
	return lifecycle.InFlight{Requests: int64(len(s.inFlight))}
}

var _ lifecycle.Server = (*Server)(nil)
