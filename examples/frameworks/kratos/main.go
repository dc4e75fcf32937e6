// Command kratos is a kratos v2.8.3 application under drainkit: its HTTP
// and gRPC transports, with kratos middleware (recovery first, as kratos
// generates it) on both, built with kratos's own constructors and handed to
// drainkit.Main, which owns the listeners, probes and the drain instead of
// kratos.App:
//
//   - HTTP: khttp.NewServer builds an *http.Server (its embedded Server
//     field, holding kratos's router, filters and middleware);
//     drainkit.WithHTTPServer serves and drains it.
//   - gRPC: kgrpc.NewServer builds a *grpc.Server (its embedded Server
//     field) with kratos's interceptor; grpcdrain.Adopt gets drainkit's
//     interceptors into it through kgrpc.Options, and kgrpc.CustomHealth
//     leaves grpc.health.v1 to drainkit (NOT_SERVING at the drain's start),
//     and kgrpc.Endpoint gives kratos the endpoint its stream interceptor
//     reads (kratos.App's Start sets it; without it every stream panics).
//     Adopt calls the build function once per grpc.Server the drain needs.
//
// The lines that differ from a kratos main are in run; docs/frameworks.md's
// "Coming from kratos / go-zero" lists them.
//
// With --framework-shutdown as the first argument it runs the same servers
// the way kratos documents it, kratos.New(...).Run(): on SIGTERM, Stop
// every server at once (http.Server.Shutdown, grpc.Server.GracefulStop),
// with no propagation window, and a GET /readyz on a third kratos HTTP
// server (--admin-addr) that answers 200 for as long as it runs. That is
// the drill's "shutdown" baseline on the same application.
//
//	kratos [--http-addr :8000] [--grpc-addr :9000] [--admin-addr :8081] [drainkit flags]
//	kratos --framework-shutdown [--http-addr ...] [--grpc-addr ...] [--admin-addr ...]
package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"

	"github.com/go-kratos/kratos/v2"
	"github.com/go-kratos/kratos/v2/middleware/recovery"
	kgrpc "github.com/go-kratos/kratos/v2/transport/grpc"
	khttp "github.com/go-kratos/kratos/v2/transport/http"
	"google.golang.org/grpc"
	testpb "google.golang.org/grpc/interop/grpc_testing"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/examples/internal/testservice"
	"github.com/drainkit/drainkit/grpcdrain"
	"github.com/drainkit/drainkit/lifecycle"
)

func main() { os.Exit(run(os.Args[1:])) }

// run returns the exit code.
func run(args []string) int {
	if len(args) > 0 && args[0] == "--framework-shutdown" {
		return frameworkShutdown(args[1:])
	}
	hs := newHTTPServer()
	return drainkit.Run(context.Background(), args,
		drainkit.WithName("kratos"),
		drainkit.WithHTTPServer("http", ":8000", hs.Server),
		// The README's recipe, line for line (readme_test.go). kratos's
		// stream interceptor reads the server's endpoint, which only
		// kratos.App's Start sets otherwise: without kgrpc.Endpoint every
		// stream, the health Watch of client-side health checking included,
		// panics on a nil *url.URL.
		drainkit.WithServer("grpc", ":9000", func(lc *lifecycle.Lifecycle, ln net.Listener) (lifecycle.Server, error) {
			endpoint := &url.URL{Scheme: "grpc", Host: ln.Addr().String()}
			return grpcdrain.Adopt(lc, ln, func(opts ...grpc.ServerOption) *grpc.Server {
				return newGRPCServer(kgrpc.Options(opts...), kgrpc.CustomHealth(), kgrpc.Endpoint(endpoint)).Server
			}), nil
		}),
	)
}

// newHTTPServer is the kratos HTTP transport as a kratos service builds it:
// recovery middleware and two routes through kratos's router, so that the
// middleware runs (GET / answers a line; GET /panic panics, which recovery
// turns into a 500 while the process keeps serving).
func newHTTPServer(opts ...khttp.ServerOption) *khttp.Server {
	hs := khttp.NewServer(append([]khttp.ServerOption{khttp.Middleware(recovery.Recovery())}, opts...)...)
	r := hs.Route("/")
	r.GET("/", func(ctx khttp.Context) error {
		out, err := ctx.Middleware(func(context.Context, any) (any, error) {
			return "hello from kratos under drainkit\n", nil
		})(ctx, nil)
		if err != nil {
			return err
		}
		return ctx.String(http.StatusOK, out.(string))
	})
	r.GET("/panic", func(ctx khttp.Context) error {
		_, err := ctx.Middleware(func(context.Context, any) (any, error) {
			panic("a handler bug")
		})(ctx, nil)
		return err
	})
	return hs
}

// newGRPCServer is the kratos gRPC transport with recovery middleware and
// grpc-go's interop TestService (EmptyCall; UnaryCall with a negative
// ResponseSize panics).
func newGRPCServer(opts ...kgrpc.ServerOption) *kgrpc.Server {
	gs := kgrpc.NewServer(append([]kgrpc.ServerOption{kgrpc.Middleware(recovery.Recovery())}, opts...)...)
	testpb.RegisterTestServiceServer(gs, testservice.Service{})
	return gs
}

// frameworkShutdown runs the same transports under kratos.App, as kratos
// documents it: the baseline the drill compares drainkit with.
func frameworkShutdown(args []string) int {
	fs := flag.NewFlagSet("kratos --framework-shutdown", flag.ContinueOnError)
	httpAddr := fs.String("http-addr", ":8000", "HTTP transport, host:port")
	grpcAddr := fs.String("grpc-addr", ":9000", "gRPC transport, host:port")
	adminAddr := fs.String("admin-addr", ":8081", "GET /readyz, host:port")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	admin := khttp.NewServer(khttp.Address(*adminAddr))
	admin.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	app := kratos.New(kratos.Name("kratos"),
		kratos.Server(newHTTPServer(khttp.Address(*httpAddr)), newGRPCServer(kgrpc.Address(*grpcAddr)), admin))
	if err := app.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "kratos:", err)
		return 1
	}
	return 0
}
