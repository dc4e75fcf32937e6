package telemetry_test

import (
	"context"
	"sync/atomic"

	"github.com/drainkit/drainkit/lifecycle"
)

// fakeServer is a lifecycle.Server without sockets for the span tests: stuck
// requests never finish, so AwaitIdle waits until its deadline.
type fakeServer struct {
	lc     *lifecycle.Lifecycle
	closed chan struct{}
	stuck  atomic.Int64
	cut    atomic.Bool
}

func newFakeServer(lc *lifecycle.Lifecycle) *fakeServer {
	return &fakeServer{lc: lc, closed: make(chan struct{})}
}

func (s *fakeServer) Serve(lifecycle.ServerHooks) error { <-s.closed; return nil }
func (s *fakeServer) LameDuck()                         {}
func (s *fakeServer) CloseListeners() error             { close(s.closed); return nil }
func (s *fakeServer) AwaitIdle(ctx context.Context) error {
	if s.stuck.Load() == 0 {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}
func (s *fakeServer) ForceClose() int {
	s.cut.Store(true)
	return int(s.stuck.Load())
}
func (s *fakeServer) InFlight() lifecycle.InFlight {
	if s.cut.Load() {
		return lifecycle.InFlight{}
	}
	return lifecycle.InFlight{Requests: s.stuck.Load()}
}
