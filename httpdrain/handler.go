package httpdrain

import (
	"context"
	"net/http"
	"net/netip"
	"unsafe"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
)

// tracker is the request path: it reports each arrival to the lifecycle,
// counts the request as in flight while its handler runs and, once the drain
// has begun, asks the client to move (Connection: close, which net/http's
// HTTP/2 server turns into GOAWAY). It allocates nothing.
type tracker struct {
	s     *Server
	next  http.Handler
	ident []string // WithIdentity's header value; nil: none
}

// connectionClose is shared by all draining responses to stay free of
// allocations. net/http and its HTTP/2 server copy or delete header values,
// never write them in place; a handler must not either (Header.Set and Add
// replace or copy the slice, which is safe).
var connectionClose = []string{"close"}

func (t *tracker) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s := t.s
	s.hooks.Arrived(callerOf(r))
	if t.ident != nil {
		// Every response, on every protocol: over HTTP/2 one connection
		// multiplexes the streams of many requests, and a consumer that
		// checked one of them has not checked the others. The value slice
		// is shared (see connectionClose), so this costs a map assignment.
		w.Header()[registry.IdentityHeader] = t.ident
	}
	if s.phase.Reached(lameDuck) {
		if _, upgrade := r.Header["Upgrade"]; !upgrade {
			w.Header()["Connection"] = connectionClose
		}
	}
	i := syncx.StripeOf(unsafe.Pointer(r)) // r is allocated per request on the core serving it
	s.handlers.Begin(i, 0)
	defer t.done(r, i)
	t.next.ServeHTTP(w, r)
}

// callerOf returns the caller of r for the propagation window's evidence:
// the remote IP without its port (r.RemoteAddr, "ip:port" or
// "[ip]:port"; zero if it does not parse) and the consumer's identity: the
// drainkit consumer header (registry.ConsumerHeader, package consumer's
// Options.Name) if the request has one, else the User-Agent. It does not
// allocate (for an IPv6 address with a zone, netip interns the zone once).
func callerOf(r *http.Request) lifecycle.Caller {
	var c lifecycle.Caller
	if v := r.Header[registry.ConsumerHeader]; len(v) > 0 {
		c.Identity = v[0]
	} else if v := r.Header["User-Agent"]; len(v) > 0 {
		c.Identity = v[0]
	}
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		c.IP = ap.Addr().Unmap()
	}
	return c
}

// done ends the handler's in-flight life. If it hijacked its connection, it
// no longer counts as a hijacking handler either (the connection stays
// counted as hijacked until it closes).
func (t *tracker) done(r *http.Request, i int) {
	s := t.s
	if s.hijackedInHandler.Load() != 0 {
		if c, _ := r.Context().Value(connKey{}).(*trackedConn); c != nil && c.hijackedReq.CompareAndSwap(true, false) {
			s.hijackedInHandler.Add(-1)
		}
	}
	if s.phase.Reached(lameDuck) && r.Context().Err() != nil {
		// Checked from t0 on only: the contexts are detached (see
		// context.go), so this is a safety net, kept off the request path
		// before the drain.
		s.noteCancelled(r.Context())
	}
	s.handlers.End(i, 0)
	if s.phase.Reached(closed) {
		s.wake.Notify()
	}
}

// connKey carries the request's *trackedConn in its context (set once per
// connection by http.Server.ConnContext).
type connKey struct{}

// Draining returns a channel that is closed when the drain starts (the
// lifecycle's t0, when Server.LameDuck is called), for handlers that hold a
// request open: server-sent events, long polls, streaming responses and
// hijacked connections such as WebSockets. Such a handler selects on it, sends
// a last event (or a WebSocket close frame with code 1001, going away) and
// returns; a handler that ignores it runs until the drain deadline
// (drain.timeout after the listeners close), when its connection is closed
// and it is counted as force-closed.
//
// ctx must be the context of a request served by an httpdrain Server, or one
// derived from it. For any other context Draining returns nil, and a receive
// from a nil channel blocks forever, so a select on it simply never fires.
//
// The drain does not cancel ctx: only the drain deadline does (ForceClose,
// with ErrForceClosed as the cause), or the client going away.
func Draining(ctx context.Context) <-chan struct{} {
	if c, ok := ctx.Value(connKey{}).(*trackedConn); ok {
		return c.s.phase.Done(lameDuck)
	}
	return nil
}
