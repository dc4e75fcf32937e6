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

	"google.golang.org/grpc"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
)

// runShutdown serves until SIGTERM or SIGINT, then calls
// http.Server.Shutdown at once (bounded by drain.timeout), as most Go
// services do: no readiness change before, no propagation window. It logs
// its drain as a lifecycle.Timeline, as the drainkit strategy does.
func runShutdown(o Options, logger *slog.Logger) (int, error) {
	return runPlain(o, logger, "shutdown", 0)
}

// runPlain is runShutdown with an optional fixed wait: with sleep > 0, at
// the signal readiness fails at once (the admin listener's /readyz answers
// 503, as a terminating pod is not ready) and the service keeps serving
// for sleep, then shuts down: the `preStop: sleep 10` baseline
// (runSleep). name prefixes its log lines.
func runPlain(o Options, logger *slog.Logger, name string, sleep time.Duration) (int, error) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	defer logSIGTERM(logger)()

	httpLn, adminLn, err := listen(o)
	if err != nil {
		return 1, err
	}
	grpcLn, err := listenGRPC(o)
	if err != nil {
		_ = httpLn.Close()
		_ = adminLn.Close()
		return 1, err
	}
	var late lateCounter
	var notReady atomic.Bool
	p := &plainServers{
		srv:   serviceServer(late.wrap(serviceHandler(o, httpLn))),
		admin: &http.Server{Handler: readyUntil(&notReady), ReadHeaderTimeout: 10 * time.Second},
		errs:  make(chan error, 3),
	}
	go func() { p.errs <- p.srv.Serve(httpLn) }()
	go func() { p.errs <- p.admin.Serve(adminLn) }()
	if grpcLn != nil {
		p.grpc = plainGRPC(&late)
		go func() { p.errs <- p.grpc.Serve(grpcLn) }()
	}
	reg, err := register(o, httpLn, grpcLn, logger)
	if err != nil {
		p.close()
		return 1, err
	}
	var sig os.Signal
	select {
	case sig = <-sigs:
	case err := <-p.errs:
		p.close()
		return 1, err
	}
	late.start()
	notReady.Store(sleep > 0)
	logger.Info(name+" strategy: signal, shutting down", "signal", sig.String(), "sleep_ms", sleep.Milliseconds())
	tl := lifecycle.Timeline{Start: late.t0, Reason: sig.String(), Steps: []lifecycle.Step{{Name: lifecycle.StepNotReady}}}
	if reg != nil {
		// The usual order: deregister, then shut down, no wait in between
		// but the fixed sleep.
		deregister(o, reg, logger)
		tl.Steps = append(tl.Steps, lifecycle.Step{Name: lifecycle.StepDeregistered, Offset: time.Since(late.t0)})
	}
	time.Sleep(sleep) // the baseline's fixed wait, serving on: not a synchronisation
	tl.Steps = append(tl.Steps, lifecycle.Step{Name: lifecycle.StepListenersClosed, Offset: time.Since(late.t0)})
	code := p.shutdown(o.Config.Timings.DrainTimeout, logger)
	tl.Steps = append(tl.Steps, lifecycle.Step{Name: lifecycle.StepIdle, Offset: time.Since(late.t0)})
	tl.LateArrivals, tl.LastLateArrival = late.n.Load(), time.Duration(late.last.Load())
	logger.Info(name+" strategy: done", "exit_code", code, "timeline", tl)
	return code, nil
}

// plainServers are the service and admin servers of a strategy without
// drainkit, and its gRPC server (nil without Options.GRPCAddr); errs gets
// each Serve's return.
type plainServers struct {
	srv, admin *http.Server
	grpc       *grpc.Server
	errs       chan error
}

// serving is how many Serve calls send to errs.
func (p *plainServers) serving() int {
	if p.grpc != nil {
		return 3
	}
	return 2
}

func (p *plainServers) close() {
	_ = p.srv.Close()
	_ = p.admin.Close()
	if p.grpc != nil {
		p.grpc.Stop()
	}
}

// shutdown calls Shutdown on the HTTP servers and GracefulStop on the gRPC
// server within timeout, waits for every Serve call and returns the exit
// code: 1 when a service server did not finish its requests in time (they
// were cut).
func (p *plainServers) shutdown(timeout time.Duration, logger *slog.Logger) int {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	grpcInTime := make(chan bool, 1)
	if p.grpc != nil {
		go func() { grpcInTime <- gracefulStop(p.grpc, timeout) }()
	} else {
		grpcInTime <- true
	}
	code := 0
	if err := p.srv.Shutdown(ctx); err != nil {
		_ = p.srv.Close()
		code = 1
	}
	if !<-grpcInTime {
		code = 1
	}
	_ = p.admin.Shutdown(ctx)
	for range p.serving() {
		if err := <-p.errs; err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Warn("listener failed", "error", err.Error())
		}
	}
	return code
}

// deregister removes the instance from its registry within the deregistration
// timeout; a failure is logged, never fatal.
func deregister(o Options, reg registry.Registrar, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), o.Config.Registry.DeregisterTimeout)
	defer cancel()
	if err := reg.Deregister(ctx); err != nil {
		logger.Warn("deregistration failed", "error", err.Error())
	}
	_ = reg.Close()
}

// register registers the instance (see newRegistrar: etcd or Consul) when
// o.Service is set (nil otherwise) and keeps it registered, as a service
// without drainkit that still uses a registry would.
func register(o Options, httpLn, grpcLn net.Listener, logger *slog.Logger) (registry.Registrar, error) {
	reg, _, err := newRegistrar(o, httpLn, grpcLn, logger, nil)
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

// note counts one request (an HTTP request, a gRPC call or stream) if it
// arrived after the shutdown began.
func (l *lateCounter) note() {
	if l.started.Load() {
		l.n.Add(1)
		l.last.Store(int64(time.Since(l.t0)))
	}
}

func (l *lateCounter) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.note()
		h.ServeHTTP(w, r)
	})
}

// alwaysReady is the admin handler of a service without drainkit: every
// probe answers 200 for as long as the process serves.
func alwaysReady() http.Handler { return readyUntil(new(atomic.Bool)) }

// readyUntil is alwaysReady whose /readyz answers 503 once notReady is
// set.
func readyUntil(notReady *atomic.Bool) http.Handler {
	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) }
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if notReady.Load() {
			http.Error(w, "not ready: terminating", http.StatusServiceUnavailable)
			return
		}
		ok(w, r)
	})
	mux.HandleFunc("GET /livez", ok)
	mux.HandleFunc("GET /startupz", ok)
	return mux
}
