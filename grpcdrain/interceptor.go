package grpcdrain

import (
	"context"
	"net"
	"strings"
	"unsafe"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/lifecycle"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// healthPrefix starts the full method name of every grpc.health.v1.Health
// call.
const healthPrefix = "/grpc.health.v1.Health/"

// Kinds of in-flight work in Server.counts.
const (
	call   syncx.Kind = 0
	stream syncx.Kind = 1
)

// unary is the request path of a unary call: it reports the arrival to the
// lifecycle (except health checks, which are not traffic) and counts the
// call as in flight while its handler runs. The count ends in a defer, so
// a handler that panics ends it too: a recovery interceptor may sit outside
// this one (grpc-go runs the interceptor set with grpc.UnaryInterceptor
// before every chained one), recover, and keep the process serving; a count left behind would
// hold every later AwaitIdle until drain.timeout. It allocates nothing (the
// defer is open-coded). Its stripe comes from the address of info, which
// grpc-go allocates per call on the core serving it (syncx.StripeOf).
func (s *Server) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if !isHealth(info.FullMethod) {
		s.hooks.Arrived(callerOf(ctx))
		if s.ident != nil {
			_ = grpc.SetHeader(ctx, s.ident) // fails only when the header was sent: not before the handler
		}
	}
	i := syncx.StripeOf(unsafe.Pointer(info))
	s.counts.Begin(i, call)
	defer s.done(i, call)
	resp, err := handler(ctx, req)
	if err != nil && ctx.Err() != nil {
		s.noteCancelled(ctx)
	}
	return resp, err
}

// isHealth reports whether method is a grpc.health.v1.Health method. The
// second byte settles it for almost every other method.
func isHealth(method string) bool {
	return len(method) > 1 && method[1] == healthPrefix[1] && strings.HasPrefix(method, healthPrefix)
}

// stream is the request path of a streaming call; see unary. A health Watch
// is neither an arrival nor in flight: it is a subscription that would never
// end by itself; it is ended when the listeners close (see watch).
func (s *Server) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if info.FullMethod == healthgrpc.Health_Watch_FullMethodName {
		return s.watch(srv, ss, handler)
	}
	if !isHealth(info.FullMethod) {
		s.hooks.Arrived(callerOf(ss.Context()))
		if s.ident != nil {
			_ = ss.SetHeader(s.ident) // fails only when the header was sent: not before the handler
		}
	}
	i := syncx.StripeOf(unsafe.Pointer(info))
	s.counts.Begin(i, stream)
	defer s.done(i, stream) // on every path, panics included: see unary
	err := handler(srv, ss)
	if err != nil && ss.Context().Err() != nil {
		s.noteCancelled(ss.Context())
	}
	return err
}

// callerOf returns the caller of the call in ctx for the propagation
// window's evidence: the peer's IP (grpc-go's peer.Peer, a context lookup).
// Not its identity: reading the user-agent metadata copies it
// (metadata.ValueFromIncomingContext allocates once per call, as
// TestInterceptorsDoNotAllocate logs), and the request path allocates
// nothing, so gRPC callers on one IP count as one caller. A peer that is not TCP (a Unix socket, bufconn) is the
// zero Caller.
func callerOf(ctx context.Context) lifecycle.Caller {
	p, ok := peer.FromContext(ctx)
	if !ok {
		return lifecycle.Caller{}
	}
	if a, ok := p.Addr.(*net.TCPAddr); ok {
		return lifecycle.Caller{IP: a.AddrPort().Addr().Unmap()}
	}
	return lifecycle.Caller{}
}

// done ends a handler's in-flight life: an atomic add and an atomic load.
// unary and stream defer it, so it runs however the handler ends. grpc-go
// does not recover a handler's panic: unless an interceptor of the
// caller's recovers it (before or after this one in the chain), the process
// ends. From the listeners' closing on, it wakes AwaitIdle. (A call that failed
// with its context cancelled is examined before, see noteCancelled, at any
// time: whatever cancelled it, the application's signal among them, may have
// acted just before the drain's t0. A call that succeeded lost nothing.)
func (s *Server) done(i int, k syncx.Kind) {
	s.counts.End(i, k)
	if s.phase.Reached(closed) {
		s.wake.Notify()
	}
}

// watch runs a health Watch whose stream context is also cancelled when the
// listeners close: the watcher has seen NOT_SERVING since t0, and the stream
// must not hold the drain open. The client then sees codes.Unavailable. This
// allocates a context per Watch, which is a long-lived subscription.
func (s *Server) watch(srv any, ss grpc.ServerStream, handler grpc.StreamHandler) error {
	ctx, cancel := context.WithCancel(ss.Context())
	defer cancel()
	stop := context.AfterFunc(s.watchCtx, cancel)
	defer stop()
	err := handler(srv, &watchStream{ServerStream: ss, ctx: ctx})
	if s.watchCtx.Err() != nil && ss.Context().Err() == nil {
		return status.Error(codes.Unavailable, "grpcdrain: the server is draining and its listeners are closed")
	}
	return err
}

type watchStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (w *watchStream) Context() context.Context { return w.ctx }
