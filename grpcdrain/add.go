package grpcdrain

import (
	"net"

	"google.golang.org/grpc"

	"github.com/drainkit/drainkit/lifecycle"
)

// Add is New followed by lc.AddServer(name, ...), the one-pass form:
//
//	grpcdrain.Add(lc, "grpc", ln, func(gs *grpc.Server) {
//		pb.RegisterGreeterServer(gs, greeter)
//	})
//
// name identifies the server in logs and GET /state. It returns the Server
// (for Health); everything New says about ln and register applies. With the
// drainkit package's entry point, return New's result from the function given
// to drainkit.WithServer instead: the entry point adds it.
func Add(lc *lifecycle.Lifecycle, name string, ln net.Listener, register func(*grpc.Server), opts ...Option) *Server {
	s := New(lc, ln, register, opts...)
	lc.AddServer(name, s)
	return s
}
