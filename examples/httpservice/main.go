// Command httpservice is a small HTTP service wrapped by drainkit: the
// lifecycle runs its warm-up, readiness checks and drain, package probes
// serves the admin listener, and its endpoints come from package app.
//
//	httpservice [--http-addr 127.0.0.1:8080] [--admin-addr 127.0.0.1:8081] [--warmup 0s]
//	            [--fail-readiness-file PATH] [--service httpservice] [drainkit keys]
//
// The drainkit keys (timings, checks, admin token) come from package config:
// flags (--propagation-min=1s), DRAINKIT_* environment variables
// (DRAINKIT_PROPAGATION_MIN=1s, DRAINKIT_ADMIN_TOKEN) or a file (--config);
// see --help. Logs are JSON lines on stderr. Exit codes: 0 drain completed; 1 warm-up
// failed or something was force-closed; 128+signo when a second signal forced
// the exit; 2 for bad flags or settings (nothing was started).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/examples/httpservice/app"
	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/probes"
	"github.com/drainkit/drainkit/telemetry"
)

func main() { os.Exit(run(os.Args[1:])) }

// run returns the exit code, so that its deferred cleanup runs before
// os.Exit.
func run(args []string) int {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	fs := pflag.NewFlagSet("httpservice", pflag.ContinueOnError)
	f := defineFlags(fs)
	service := fs.String("service", "httpservice", "service name to register in Consul when CONSUL_HTTP_ADDR is set")
	fs.SetOutput(io.Discard) // errors are reported below, in one line
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "Usage: httpservice [flags]")
			fs.SetOutput(os.Stderr)
			fs.PrintDefaults()
			return 0
		}
		return usageError(fmt.Errorf("%w (see --help)", err))
	}
	// Every setting is checked before any listener opens.
	cfg, err := config.Load(config.Sources{Flags: fs})
	if err != nil {
		return usageError(err)
	}
	if err := f.validate(cfg.Timings.WarmupTimeout); err != nil {
		return usageError(err)
	}
	// Telemetry: with admin.metrics (--admin-metrics), GET /metrics on the
	// admin listener through the OpenTelemetry Prometheus exporter; else the
	// global providers (no-op unless a program sets them).
	var prom *telemetry.Prometheus
	telOpts := telemetry.Options{}
	if cfg.Admin.Metrics {
		if prom, err = telemetry.NewPrometheus(); err != nil {
			return usageError(fmt.Errorf("admin.metrics: %w", err))
		}
		defer prom.Shutdown(context.Background())
		telOpts.MeterProvider = prom.MeterProvider()
	}
	tel, err := telemetry.New(telOpts)
	if err != nil {
		return usageError(err)
	}
	defer tel.Close()

	// The admin listener comes first so that the startup and readiness
	// probes answer (503) during warm-up.
	adminLn, err := net.Listen("tcp", adminAddr(cfg))
	if err != nil {
		return usageError(fmt.Errorf("--admin-addr: %w", err))
	}
	defer adminLn.Close()
	lc, err := lifecycle.New(append(cfg.LifecycleOptions(), lifecycle.WithLogger(logger), lifecycle.WithObserver(tel))...)
	if err != nil {
		return usageError(err)
	}
	_ = tel.Attach(lc)
	ph, err := probes.New(lc, probes.Options{Token: string(cfg.Admin.Token), Logger: logger})
	if err != nil {
		return usageError(err)
	}
	var adminHandler http.Handler = ph
	if prom != nil {
		mux := http.NewServeMux()
		mux.Handle("/metrics", prom.Handler())
		mux.Handle("/", ph)
		adminHandler = mux
	}
	admin := &http.Server{Handler: adminHandler, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	adminDone := make(chan struct{})
	go func() {
		defer close(adminDone)
		if err := admin.Serve(adminLn); !errors.Is(err, http.ErrServerClosed) {
			logger.Error("admin listener failed", "error", err)
		}
	}()
	// Cleanup after Run: the admin listener served through the whole drain.
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := admin.Shutdown(ctx); err != nil {
			_ = admin.Close()
		}
		<-adminDone
		_ = ph.Close()
		logger.Info("cleanup done")
	}()

	httpLn, err := net.Listen("tcp", f.httpAddr)
	if err != nil {
		return usageError(fmt.Errorf("--http-addr: %w", err))
	}
	defer httpLn.Close() // Serve never runs if the drain starts during warm-up
	srv := &http.Server{Handler: app.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	lc.AddServer("http", httpdrain.New(lc, srv, httpLn))
	if err := setupRegistry(lc, cfg.Registry, *service, httpLn.Addr(), logger); err != nil {
		return usageError(err)
	}

	if f.failReadinessFile != "" {
		lc.AddCheck(fileCheck(f.failReadinessFile))
	}
	// The first warm-up hook runs inside Run, after it handles signals.
	lc.OnWarmup("announce", func(context.Context) error {
		logger.Info("started", "admin", adminLn.Addr().String(), "http", httpLn.Addr().String())
		return nil
	})
	if f.warmup > 0 {
		lc.OnWarmup("simulated", func(ctx context.Context) error {
			t := time.NewTimer(f.warmup)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}
	err = lc.Run(context.Background())
	// Flush after Run: the drain span is complete (see package telemetry).
	flushCtx, cancelFlush := context.WithTimeout(context.Background(), time.Second)
	defer cancelFlush()
	if ferr := tel.Flush(flushCtx); ferr != nil {
		logger.Warn("telemetry flush failed", "error", ferr)
	}
	return lifecycle.ExitCode(err)
}

// usageError prints one line and returns exit code 2: nothing was started.
func usageError(err error) int {
	fmt.Fprintln(os.Stderr, "httpservice: "+err.Error())
	return 2
}
