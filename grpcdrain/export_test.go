package grpcdrain

import "google.golang.org/grpc"

// Interceptors exposes the request path to the benchmarks.
func (s *Server) Interceptors() (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor) {
	return s.unary, s.stream
}
