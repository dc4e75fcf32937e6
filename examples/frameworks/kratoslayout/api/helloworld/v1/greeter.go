// Package v1 stands in for the Greeter API kratos-layout generates
// (api/helloworld/v1): its registration functions, here serving grpc-go's
// interop TestService, whose unary calls and bidirectional stream let a
// test drive both kinds of call through the layout's providers.
package v1

import (
	"context"
	"net/http"

	khttp "github.com/go-kratos/kratos/v2/transport/http"
	"google.golang.org/grpc"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// GreeterServer is the service's gRPC interface.
type GreeterServer = testpb.TestServiceServer

// RegisterGreeterServer registers srv on s.
func RegisterGreeterServer(s grpc.ServiceRegistrar, srv GreeterServer) {
	testpb.RegisterTestServiceServer(s, srv)
}

// RegisterGreeterHTTPServer routes GET /helloworld through kratos's router
// and middleware to srv's EmptyCall, as the generated HTTP binding does.
func RegisterGreeterHTTPServer(s *khttp.Server, srv GreeterServer) {
	s.Route("/").GET("/helloworld", func(ctx khttp.Context) error {
		_, err := ctx.Middleware(func(c context.Context, _ any) (any, error) {
			return srv.EmptyCall(c, &testpb.Empty{})
		})(ctx, nil)
		if err != nil {
			return err
		}
		return ctx.String(http.StatusOK, "hello\n")
	})
}
