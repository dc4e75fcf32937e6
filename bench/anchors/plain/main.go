// Command plain is the plain net/http anchor: the example service's handlers
// on an http.Server that calls Shutdown on SIGTERM, as net/http's
// documentation of Server.Shutdown shows (os/signal.NotifyContext, then
// Shutdown with a deadline; https://pkg.go.dev/net/http#Server.Shutdown).
// Readiness is GET /readyz on the admin listener, 200 while it serves; it
// closes with the service listener.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/drainkit/drainkit/bench/anchors/internal/anchor"
)

func main() { os.Exit(run()) }

func run() int {
	f := anchor.ParseFlags("plain")
	srv := &http.Server{Addr: f.HTTPAddr, Handler: anchor.Handler(), ReadHeaderTimeout: 10 * time.Second}
	admin := http.NewServeMux()
	admin.HandleFunc("GET /readyz", anchor.Ready)
	adminSrv := &http.Server{Addr: f.AdminAddr, Handler: admin, ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	errc := make(chan error, 2)
	go func() { errc <- srv.ListenAndServe() }()
	go func() { errc <- adminSrv.ListenAndServe() }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		fmt.Fprintln(os.Stderr, "plain:", err)
		return 1
	}
	sctx, cancel := context.WithTimeout(context.Background(), anchor.DrainTimeout(8*time.Second))
	defer cancel()
	_ = adminSrv.Shutdown(sctx)
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "plain: shutdown:", err)
		return 1
	}
	return 0
}
