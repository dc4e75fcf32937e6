// Command server is a kratos-layout service under drainkit, wired as
// docs/frameworks.md's "kratos-layout with wire" says: wireApp builds the
// drainkit options of its servers instead of a *kratos.App, with the
// configuration file's addresses (server.http.addr, server.grpc.addr) as
// the listeners' defaults, and drainkit.Main owns the flags, listeners,
// probes and the drain.
//
//	server [--conf ../../configs] [--http-addr ADDR] [--grpc-addr ADDR] [drainkit flags]
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"

	"github.com/go-kratos/kratos/v2/config"
	"github.com/go-kratos/kratos/v2/config/file"
	"github.com/go-kratos/kratos/v2/log"
	kgrpc "github.com/go-kratos/kratos/v2/transport/grpc"
	khttp "github.com/go-kratos/kratos/v2/transport/http"
	"github.com/spf13/pflag"
	"google.golang.org/grpc"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/examples/frameworks/kratoslayout/internal/conf"
	"github.com/drainkit/drainkit/examples/frameworks/kratoslayout/internal/server"
	"github.com/drainkit/drainkit/grpcdrain"
	"github.com/drainkit/drainkit/lifecycle"
)

// flagconf is --conf: the configuration file or directory.
var flagconf string

// app is what wireApp builds: the drainkit options of the servers.
type app struct{ opts []drainkit.Option }

// newApp is the layout's newApp under drainkit. The gRPC option is the
// kratos example's (examples/frameworks/kratos), line for line but for the
// address (readme_test.go checks it): kgrpc.Endpoint gives kratos the
// endpoint its stream interceptor reads, which only kratos.App's Start sets
// otherwise; without it every stream panics on a nil *url.URL.
func newApp(c *conf.Server, newGRPCServer server.GRPCFactory, hs *khttp.Server) *app {
	return &app{opts: []drainkit.Option{
		drainkit.WithHTTPServer("http", c.Http.Addr, hs.Server),
		drainkit.WithServer("grpc", c.Grpc.Addr, func(lc *lifecycle.Lifecycle, ln net.Listener) (lifecycle.Server, error) {
			endpoint := &url.URL{Scheme: "grpc", Host: ln.Addr().String()}
			return grpcdrain.Adopt(lc, ln, func(opts ...grpc.ServerOption) *grpc.Server {
				return newGRPCServer(kgrpc.Options(opts...), kgrpc.CustomHealth(), kgrpc.Endpoint(endpoint)).Server
			}), nil
		}),
	}}
}

func main() {
	pre := pflag.NewFlagSet("conf", pflag.ContinueOnError)
	pre.ParseErrorsAllowlist.UnknownFlags = true
	pre.SetOutput(io.Discard)
	pre.StringVar(&flagconf, "conf", "../../configs", "config path, eg: --conf config.yaml")
	_ = pre.Parse(os.Args[1:]) // --help and bad flags are drainkit's to report

	logger := log.With(log.NewStdLogger(os.Stderr), "ts", log.DefaultTimestamp, "caller", log.DefaultCaller)
	bc, err := load(flagconf)
	if err != nil {
		fmt.Fprintf(os.Stderr, "server: --conf %s: %v\n", flagconf, err)
		os.Exit(2)
	}
	a, cleanup, err := wireApp(bc.Server, bc.Data, logger)
	if err != nil {
		panic(err)
	}
	os.Exit(drainkit.Main(append(a.opts,
		drainkit.WithFlags(func(fs *pflag.FlagSet) {
			fs.String("conf", "../../configs", "config path, eg: --conf config.yaml") // read above
		}),
		drainkit.OnStop("data", func(context.Context) error { cleanup(); return nil }),
	)...))
}

// load reads the configuration at path (a file, or a directory of them) as
// the layout's main does, and requires the server section's addresses.
func load(path string) (*conf.Bootstrap, error) {
	c := config.New(config.WithSource(file.NewSource(path)))
	defer c.Close()
	if err := c.Load(); err != nil {
		return nil, err
	}
	var bc conf.Bootstrap
	if err := c.Scan(&bc); err != nil {
		return nil, err
	}
	if bc.Server == nil || bc.Server.Http == nil || bc.Server.Grpc == nil {
		return nil, errors.New("server.http and server.grpc are required (their addr is the listeners' default)")
	}
	return &bc, nil
}
