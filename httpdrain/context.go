package httpdrain

import (
	"context"
	"errors"
	"net"
)

// ErrForceClosed is the cancellation cause (context.Cause) of the requests
// still running when the drain deadline (drain.timeout) force-closes their
// connections.
var ErrForceClosed = errors.New("httpdrain: drain.timeout reached: request force-closed")

// Request contexts. A service may set http.Server.BaseContext or ConnContext
// to a context of its own, often one cancelled on SIGTERM
// (signal.NotifyContext). net/http derives every request's context from it,
// so that signal would cancel every request in flight and every request of
// the propagation window at t0. httpdrain keeps such a context's values but
// not its cancellation (context.WithoutCancel): in-flight work ends on
// drainkit's deadline, not on the application's signal. Each connection's
// context gets a cancellation of drainkit's own instead, which ForceClose
// triggers with ErrForceClosed; the client going away still cancels a request
// as net/http does.

// detachBase wraps a BaseContext set by the caller.
func detachBase(base func(net.Listener) context.Context) func(net.Listener) context.Context {
	return func(ln net.Listener) context.Context { return context.WithoutCancel(base(ln)) }
}

// connContext is installed as http.Server.ConnContext, after the caller's
// (whose context it detaches): it gives the connection drainkit's
// cancellation and carries its *trackedConn (see Draining).
func (s *Server) connContext(ctx context.Context, nc net.Conn) context.Context {
	if s.userConnContext != nil {
		ctx = context.WithoutCancel(s.userConnContext(ctx, nc))
	}
	c := connOf(nc)
	if c == nil {
		return ctx
	}
	ctx, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	c.cancel = cancel
	s.mu.Unlock()
	return context.WithValue(ctx, connKey{}, c)
}

// cancelAllLocked cancels every connection's context with ErrForceClosed.
// s.mu is held.
func (s *Server) cancelAllLocked() {
	for c := range s.conns {
		if c.cancel != nil {
			c.cancel(ErrForceClosed)
		}
	}
}

// noteCancelled reports a request whose context was cancelled by something
// other than its client (net/http cancels with
// context.Canceled when the connection's peer goes away) or the drain
// deadline (ErrForceClosed): Timeline.CancelledEarly. With the contexts
// detached above, this is the safety net for a cancellation that reaches a
// request some other way.
func (s *Server) noteCancelled(ctx context.Context) {
	if cause := context.Cause(ctx); cause == context.Canceled || errors.Is(cause, ErrForceClosed) {
		return
	}
	s.hooks.CancelledEarly()
}
