package grpcdrain

import (
	"github.com/drainkit/drainkit/lifecycle"
	"google.golang.org/grpc"
)

// Interceptors exposes the request path to the benchmarks. Serve, which
// hands the server the lifecycle's ServerHooks, is not called there: the
// interceptors report to hooks that count nothing (the lifecycle's own are
// checked not to allocate in package lifecycle).
func (s *Server) Interceptors() (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor) {
	s.hooks = noHooks{}
	return s.unary, s.stream
}

type noHooks struct{}

func (noHooks) Arrived(lifecycle.Caller) {}
func (noHooks) CancelledEarly()          {}

// LingerMax is how long Serve waits, after the force close, for handlers
// that ignore their context's cancellation.
const LingerMax = lingerMax
