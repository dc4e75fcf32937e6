// Command grpcservice is a gRPC service that builds its own *grpc.Server,
// with a recovery interceptor set by grpc.UnaryInterceptor as most services
// have, and hands it to drainkit with grpcdrain.Adopt. It also serves a small
// HTTP status page, as many gRPC services do.
//
// The service is grpc-go's interop TestService: EmptyCall answers at once;
// UnaryCall sleeps ResponseSize milliseconds (at most 10 s), and panics for
// a negative ResponseSize, a handler bug that the recovery interceptor turns
// into codes.Internal while the process keeps serving.
//
// With ETCD_ENDPOINTS (or registry.etcd.endpoints) set it registers in etcd,
// and with CONSUL_HTTP_ADDR set in Consul: once per registry, one
// registration holding both endpoints ("http://host:port" and
// "grpc://host:port", as a kratos app with two servers registers), which the
// drain removes at its start.
//
//	go run ./examples/grpcservice --grpc-addr 127.0.0.1:9090
package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"runtime/debug"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/examples/internal/testservice"
	"github.com/drainkit/drainkit/grpcdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry/consul"
	"github.com/drainkit/drainkit/registry/etcd"
)

func main() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		if _, err := fmt.Fprintln(w, "grpcservice"); err != nil {
			log.Printf("writing the response: %v", err) // the client went away
		}
	})
	os.Exit(drainkit.Main(
		drainkit.WithHTTP("http", ":8080", mux),
		drainkit.WithServer("grpc", ":9090", func(lc *lifecycle.Lifecycle, ln net.Listener) (lifecycle.Server, error) {
			return grpcdrain.Adopt(lc, ln, newGRPCServer), nil
		}),
		// One registration per registry holding both endpoints
		// (http://host:port, grpc://host:port): etcd when
		// registry.etcd.endpoints or ETCD_ENDPOINTS is set, Consul when
		// CONSUL_HTTP_ADDR is.
		etcd.Register("grpcservice"),
		consul.Register("grpcservice"),
	))
}

// newGRPCServer builds the service's gRPC server as the program would
// without drainkit, plus drainkit's options. drainkit calls it more than
// once (see grpcdrain.Adopt).
func newGRPCServer(drainOpts ...grpc.ServerOption) *grpc.Server {
	gs := grpc.NewServer(append(drainOpts, grpc.UnaryInterceptor(recovery))...)
	testpb.RegisterTestServiceServer(gs, testservice.Service{})
	return gs
}

// recovery turns a handler's panic into codes.Internal and logs it.
func recovery(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if r := recover(); r != nil {
			log.Printf("panic in %s: %v\n%s", info.FullMethod, r, debug.Stack())
			err = status.Errorf(codes.Internal, "internal error")
		}
	}()
	return handler(ctx, req)
}
