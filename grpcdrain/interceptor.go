package grpcdrain

import (
	"context"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// healthPrefix starts the full method name of every grpc.health.v1.Health
// call.
const healthPrefix = "/grpc.health.v1.Health/"

// unary is the request path of a unary call: it reports the arrival to the
// lifecycle (except health checks, which are not traffic) and counts the
// call as in flight while its handler runs. It allocates nothing.
func (s *Server) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if !strings.HasPrefix(info.FullMethod, healthPrefix) {
		s.lc.Arrived()
	}
	i := pick()
	s.counts.begin(i, call)
	defer s.done(i, call)
	return handler(ctx, req)
}

// stream is the request path of a streaming call; see unary. A health Watch
// is neither an arrival nor in flight: it is a subscription that would never
// end by itself; it is ended when the listeners close (see watch).
func (s *Server) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	if info.FullMethod == healthgrpc.Health_Watch_FullMethodName {
		return s.watch(srv, ss, handler)
	}
	if !strings.HasPrefix(info.FullMethod, healthPrefix) {
		s.lc.Arrived()
	}
	i := pick()
	s.counts.begin(i, stream)
	defer s.done(i, stream)
	return handler(srv, ss)
}

// done ends a handler's in-flight life and, once the drain waits for
// in-flight work, wakes AwaitIdle.
func (s *Server) done(i int, k kind) {
	s.counts.end(i, k)
	if s.awaiting.Load() {
		s.wake()
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
