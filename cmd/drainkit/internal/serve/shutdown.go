package serve

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
)

// runShutdown serves until SIGTERM or SIGINT, then calls
// http.Server.Shutdown at once (bounded by drain.timeout), as most Go
// services do: no readiness change before, no propagation window.
func runShutdown(o Options, logger *slog.Logger) (int, error) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)

	httpLn, adminLn, err := listen(o)
	if err != nil {
		return 1, err
	}
	var late lateCounter
	srv := &http.Server{Handler: late.wrap(handler()), ReadHeaderTimeout: 10 * time.Second}
	admin := &http.Server{Handler: alwaysReady(), ReadHeaderTimeout: 10 * time.Second}
	serveErr := make(chan error, 2)
	go func() { serveErr <- srv.Serve(httpLn) }()
	go func() { serveErr <- admin.Serve(adminLn) }()

	reg, err := register(o, httpLn, logger)
	if err != nil {
		_ = srv.Close()
		_ = admin.Close()
		return 1, err
	}

	var sig os.Signal
	select {
	case sig = <-sigs:
	case err := <-serveErr:
		_ = srv.Close()
		_ = admin.Close()
		return 1, err
	}
	late.start()
	t0 := late.t0
	logger.Info("shutdown strategy: signal, shutting down", "signal", sig.String())
	if reg != nil {
		// The usual order: deregister, then shut down, no wait in between.
		ctx, cancel := context.WithTimeout(context.Background(), o.Config.Registry.DeregisterTimeout)
		if err := reg.Deregister(ctx); err != nil {
			logger.Warn("deregistration failed", "error", err.Error())
		}
		cancel()
		_ = reg.Close()
	}
	closed := time.Since(t0)
	ctx, cancel := context.WithTimeout(context.Background(), o.Config.Timings.DrainTimeout)
	defer cancel()
	code := 0
	if err := srv.Shutdown(ctx); err != nil {
		_ = srv.Close()
		code = 1
	}
	idle := time.Since(t0)
	_ = admin.Shutdown(ctx)
	for range 2 {
		if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Warn("listener failed", "error", err.Error())
		}
	}
	steps := []any{
		slog.Time("start", t0), slog.String("reason", sig.String()),
		slog.Int64("late_arrivals", late.n.Load()), slog.Duration("last_late_arrival", time.Duration(late.last.Load())),
		slog.Duration(lifecycle.StepNotReady, 0),
	}
	if reg != nil {
		steps = append(steps, slog.Duration(lifecycle.StepDeregistered, closed))
	}
	steps = append(steps, slog.Duration(lifecycle.StepListenersClosed, closed), slog.Duration(lifecycle.StepIdle, idle))
	logger.Info("shutdown strategy: done", "exit_code", code, slog.Group("timeline", steps...))
	return code, nil
}

// register registers the instance (see newRegistrar: etcd or Consul) when
// o.Service is set (nil otherwise) and keeps it registered, as a service
// without drainkit that still uses a registry would.
func register(o Options, httpLn net.Listener, logger *slog.Logger) (registry.Registrar, error) {
	reg, _, err := newRegistrar(o, httpLn, logger)
	if err != nil || reg == nil {
		return nil, err
	}
	err = reg.Sync(context.Background(), lifecycle.Transition{
		From: lifecycle.Starting, To: lifecycle.Ready, Cause: lifecycle.CauseWarmup, Reason: "listening", At: time.Now(),
	})
	if err != nil {
		logger.Warn("registration failed; the heartbeat retries", "error", err.Error())
	}
	return reg, nil
}

// lateCounter counts requests that arrive after the shutdown began.
type lateCounter struct {
	started atomic.Bool
	t0      time.Time
	n       atomic.Int64
	last    atomic.Int64 // offset from t0, ns
}

func (l *lateCounter) start() {
	l.t0 = time.Now()
	l.started.Store(true)
}

func (l *lateCounter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l.started.Load() {
			l.n.Add(1)
			l.last.Store(int64(time.Since(l.t0)))
		}
		h.ServeHTTP(w, r)
	})
}

// alwaysReady is the admin handler of a service without drainkit: every
// probe answers 200 for as long as the process serves.
func alwaysReady() http.Handler {
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) }
	mux.HandleFunc("GET /readyz", ok)
	mux.HandleFunc("GET /livez", ok)
	mux.HandleFunc("GET /startupz", ok)
	return mux
}
