package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
)

// scaleServerCmd is the hidden subcommand table 6 re-executes this binary
// as: one server, drainkit's (lifecycle + httpdrain, no propagation window)
// or plain net/http's (http.Server.Shutdown on SIGTERM), so that its memory
// is its own. It prints "listening ADDR" once it accepts and "inflight N"
// when the Nth request to /work entered its handler (the client makes each
// last long enough for all N to be in flight then).
const scaleServerCmd = "scale-server"

func scaleServer(args []string) int {
	fs := flag.NewFlagSet(scaleServerCmd, flag.ContinueOnError)
	mode := fs.String("mode", "drainkit", "drainkit or plain")
	inflight := fs.Int64("inflight", 0, `print "inflight N" when the Nth request to /work started`)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	raiseNoFile()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	srv := &http.Server{Handler: scaleHandler(*inflight), ReadHeaderTimeout: 10 * time.Second}
	fmt.Printf("listening %s\n", ln.Addr())
	switch *mode {
	case "drainkit":
		return serveDrainkit(srv, ln)
	case "plain":
		return servePlain(srv, ln)
	}
	fmt.Fprintf(os.Stderr, "-mode: %q is not drainkit or plain\n", *mode)
	return 2
}

// scaleHandler answers / at once and /work?d= after d.
func scaleHandler(report int64) http.Handler {
	var started atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		d, _ := time.ParseDuration(r.URL.Query().Get("d"))
		if started.Add(1) == report {
			fmt.Printf("inflight %d\n", report)
		}
		select {
		case <-time.After(d):
			_, _ = io.WriteString(w, "worked\n")
		case <-r.Context().Done():
		}
	})
	return mux
}

func serveDrainkit(srv *http.Server, ln net.Listener) int {
	t := budget.DefaultTimings()
	t.PropagationMin, t.PropagationQuiet, t.PropagationMax = 0, 0, 0
	t.DrainTimeout = 10 * time.Second
	lc, err := lifecycle.New(lifecycle.Options{Logger: discard, Timings: t})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	lc.AddServer("http", httpdrain.New(srv, ln))
	return lifecycle.ExitCode(lc.Run(context.Background()))
}

func servePlain(srv *http.Server, ln net.Listener) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return 1
	}
	return 0
}
