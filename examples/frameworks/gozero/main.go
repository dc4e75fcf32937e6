// Command gozero is a go-zero v1.10.3 REST service under drainkit: the
// rest.Server is built as goctl generates it (rest.RestConf loaded with
// go-zero's defaults, rest.MustNewServer, AddRoutes), and its handler, the
// router behind go-zero's middleware chain (recovery, timeout, breaker,
// shedding, tracing, metrics, max-conns, ...), is handed to drainkit.Main,
// which owns the listener, the probes and the drain instead of
// server.Start:
//
//   - go-zero exposes that handler only to a rest.StartOption, which sees
//     the *http.Server it builds; serverOf closes that server before go-zero
//     can listen (ListenAndServe then returns at once) and returns a copy
//     with the same handler and timeouts for drainkit.WithHTTPServer.
//   - go-zero's core/proc handles SIGTERM too and, Shutdown.WaitTime
//     (default 5.5s) after it, sends the process SIGTERM again, which
//     drainkit takes as the second signal that forces an exit. So the
//     service raises it beyond drainkit's grace_period
//     (proc.SetTimeToForceQuit): drainkit's drain ends, and the process
//     exits, first.
//
// With --framework-shutdown as the first argument it runs the same server
// the way go-zero does (server.Start(): on SIGTERM, go-zero keeps serving
// for Shutdown.WrapUpTime, 1s, then marks its health probe not ready and
// calls http.Server.Shutdown), with go-zero's DevServer answering GET
// /readyz on --admin-addr: the drill's "shutdown" baseline on the same
// service.
//
//	gozero [--http-addr :8888] [--admin-addr :8081] [drainkit flags]
//	gozero --framework-shutdown [--http-addr ...] [--admin-addr ...]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/zeromicro/go-zero/core/conf"
	"github.com/zeromicro/go-zero/core/proc"
	"github.com/zeromicro/go-zero/rest"
	"github.com/zeromicro/go-zero/rest/httpx"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
)

func main() { os.Exit(run(os.Args[1:])) }

// run returns the exit code.
func run(args []string) int {
	if len(args) > 0 && args[0] == "--framework-shutdown" {
		return frameworkShutdown(args[1:])
	}
	// go-zero's own listener is never opened; drainkit's --http-addr is.
	server, err := newServer("0.0.0.0", 8888, "")
	if err != nil {
		fmt.Fprintln(os.Stderr, "gozero:", err)
		return 2
	}
	return drainkit.Run(context.Background(), args,
		drainkit.WithName("gozero"),
		drainkit.WithHTTPServer("http", ":8888", serverOf(server)),
		drainkit.WithSetup(func(cfg *config.Config) ([]drainkit.Option, error) {
			proc.SetTimeToForceQuit(cfg.Timings.GracePeriod + 10*time.Second)
			return nil, nil
		}),
	)
}

// serverOf returns the *http.Server go-zero would serve, without serving
// it: its handler (go-zero's middleware chain and router) and timeouts.
func serverOf(server *rest.Server) *http.Server {
	built := make(chan *http.Server, 1)
	go server.StartWithOpts(func(svr *http.Server) {
		built <- &http.Server{Handler: svr.Handler, ReadTimeout: svr.ReadTimeout, WriteTimeout: svr.WriteTimeout,
			ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
		// Closed before go-zero listens: its ListenAndServe returns
		// http.ErrServerClosed at once, and this goroutine then waits for
		// go-zero's shutdown listener (SIGTERM) and ends.
		_ = svr.Close()
	})
	return <-built
}

// newServer builds the rest.Server as goctl generates it, its RestConf
// loaded from YAML so that go-zero's defaults apply. admin, when not empty,
// enables go-zero's DevServer there with GET /readyz (the baseline's
// readiness). CpuThreshold 0 turns go-zero's CPU load shedding off: a drill
// saturates its machine by design, and shed requests (503) would count as
// drain failures.
func newServer(host string, port int, admin string) (*rest.Server, error) {
	dev := "DevServer:\n  Enabled: false\n"
	if admin != "" {
		ahost, aport, err := splitHostPort(admin)
		if err != nil {
			return nil, fmt.Errorf("--admin-addr: %w", err)
		}
		dev = fmt.Sprintf("DevServer:\n  Enabled: true\n  Host: %s\n  Port: %d\n  HealthPath: /readyz\n  EnableMetrics: false\n  EnablePprof: false\n", ahost, aport)
	}
	yaml := fmt.Sprintf("Name: gozero\nHost: %s\nPort: %d\nCpuThreshold: 0\nLog:\n  Mode: console\n  Level: error\n%s", host, port, dev)
	var c rest.RestConf
	if err := conf.LoadFromYamlBytes([]byte(yaml), &c); err != nil {
		return nil, err
	}
	server, err := rest.NewServer(c)
	if err != nil {
		return nil, err
	}
	server.AddRoutes([]rest.Route{
		{Method: http.MethodGet, Path: "/", Handler: func(w http.ResponseWriter, r *http.Request) {
			httpx.OkJsonCtx(r.Context(), w, map[string]string{"message": "hello from go-zero under drainkit"})
		}},
		{Method: http.MethodGet, Path: "/panic", Handler: func(http.ResponseWriter, *http.Request) {
			panic("a handler bug") // go-zero's recovery middleware answers 500
		}},
	})
	return server, nil
}

// frameworkShutdown runs the same service with server.Start(), as go-zero
// does: the baseline the drill compares drainkit with.
func frameworkShutdown(args []string) int {
	fs := flag.NewFlagSet("gozero --framework-shutdown", flag.ContinueOnError)
	httpAddr := fs.String("http-addr", ":8888", "REST listener, host:port")
	adminAddr := fs.String("admin-addr", ":8081", "go-zero DevServer with GET /readyz, host:port")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	host, port, err := splitHostPort(*httpAddr)
	if err == nil {
		var server *rest.Server
		if server, err = newServer(host, port, *adminAddr); err == nil {
			defer server.Stop()
			server.Start()
			return 0
		}
	}
	fmt.Fprintln(os.Stderr, "gozero:", err)
	return 2
}

func splitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, errors.New("want a numeric port 0..65535")
	}
	if host == "" {
		host = "0.0.0.0"
	}
	return host, port, nil
}
