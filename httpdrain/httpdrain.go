// Package httpdrain drains a net/http server as part of a drainkit lifecycle.
// This is a first minimal version; see the package documentation once complete.
package httpdrain

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/drainkit/drainkit/lifecycle"
)

// Server runs an *http.Server as a lifecycle.Server. Create it with New.
type Server struct {
	lc  *lifecycle.Lifecycle
	srv *http.Server
	ln  net.Listener

	next     http.Handler
	requests atomic.Int64
	lame     atomic.Bool
	closing  atomic.Bool
	drainCh  chan struct{}
	lameOnce sync.Once
	poke     chan struct{}
}

type ctxKey struct{}

// New wraps srv.Handler (http.DefaultServeMux if nil) with in-flight
// tracking and returns a Server that serves srv on ln.
func New(lc *lifecycle.Lifecycle, srv *http.Server, ln net.Listener) *Server {
	s := &Server{lc: lc, srv: srv, ln: ln, drainCh: make(chan struct{}), poke: make(chan struct{}, 1)}
	s.next = srv.Handler
	if s.next == nil {
		s.next = http.DefaultServeMux
	}
	srv.Handler = &tracker{s}
	userBase := srv.BaseContext
	srv.BaseContext = func(l net.Listener) context.Context {
		ctx := context.Background()
		if userBase != nil {
			ctx = userBase(l)
		}
		return context.WithValue(ctx, ctxKey{}, s)
	}
	return s
}

// Draining returns a channel closed when the drain starts, or nil when ctx
// does not come from an httpdrain Server.
func Draining(ctx context.Context) <-chan struct{} {
	if s, ok := ctx.Value(ctxKey{}).(*Server); ok {
		return s.drainCh
	}
	return nil
}

type tracker struct{ s *Server }

func (t *tracker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := t.s
	s.lc.Arrived()
	s.requests.Add(1)
	defer s.done()
	s.next.ServeHTTP(w, r)
}

func (s *Server) done() {
	if s.requests.Add(-1) == 0 && s.closing.Load() {
		select {
		case s.poke <- struct{}{}:
		default:
		}
	}
}

// Serve serves until CloseListeners.
func (s *Server) Serve() error {
	err := s.srv.Serve(s.ln)
	if s.closing.Load() {
		return nil
	}
	return err
}

// LameDuck disables keep-alives and closes the drain channel.
func (s *Server) LameDuck() {
	s.lameOnce.Do(func() {
		s.lame.Store(true)
		s.srv.SetKeepAlivesEnabled(false)
		close(s.drainCh)
	})
}

// CloseListeners closes the listener.
func (s *Server) CloseListeners() error {
	s.closing.Store(true)
	err := s.ln.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// AwaitIdle waits for in-flight requests.
func (s *Server) AwaitIdle(ctx context.Context) error {
	for s.requests.Load() != 0 {
		select {
		case <-s.poke:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// ForceClose closes all connections.
func (s *Server) ForceClose() int {
	n := int(s.requests.Load())
	_ = s.srv.Close()
	return n
}

// InFlight reports in-flight requests.
func (s *Server) InFlight() lifecycle.InFlight {
	return lifecycle.InFlight{Requests: s.requests.Load()}
}

var _ lifecycle.Server = (*Server)(nil)
