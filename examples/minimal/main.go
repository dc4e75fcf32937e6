// Command minimal is the README's example: the least a service needs to be
// drained by drainkit. examples/httpservice is the complete version (flags,
// Consul, telemetry, readiness checks).
//
//	go run ./examples/minimal   # then: curl localhost:8081/readyz; kill -TERM <pid>
package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/probes"
)

func main() { os.Exit(run()) }

func run() int {
	cfg, err := config.Load(config.Sources{}) // DRAINKIT_* env; add Flags or File as needed
	if err != nil {
		fmt.Fprintln(os.Stderr, err) // names the key, the value, its source and the range
		return 2
	}
	lc, err := lifecycle.New(cfg.LifecycleOptions()...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	probeHandler, err := probes.New(lc, probes.Options{Token: string(cfg.Admin.Token)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer probeHandler.Close()
	adminLn, err := net.Listen("tcp", cfg.Admin.Addr) // admin.addr, default :8081: probes, preStop
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer adminLn.Close()
	go http.Serve(adminLn, probeHandler) // keeps serving until Run returns

	lc.OnWarmup("cache", func(ctx context.Context) error { return nil }) // readiness fails until warm-up succeeds
	lc.OnStop("cache", func(ctx context.Context) error { return nil })   // stop hooks run last, in reverse order
	ln, err := net.Listen("tcp", ":8080")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello") })
	lc.AddServer("http", httpdrain.New(lc, &http.Server{Handler: mux}, ln))
	return lifecycle.ExitCode(lc.Run(context.Background())) // blocks until drained
}
