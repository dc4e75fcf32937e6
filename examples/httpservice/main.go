// Command httpservice is a small HTTP service wrapped by drainkit: the entry
// point drainkit.Run loads the settings, serves the admin listener and runs
// the lifecycle (warm-up, readiness checks, drain); the endpoints come from
// package app.
//
//	httpservice [--http-addr 127.0.0.1:8080] [--admin-addr 127.0.0.1:8081] [--warmup 0s]
//	            [--fail-readiness-file PATH] [--service httpservice] [drainkit keys]
//
// The drainkit keys (timings, checks, admin token, admin.metrics) come from
// flags (--propagation-min=1s), DRAINKIT_* environment variables
// (DRAINKIT_PROPAGATION_MIN=1s, DRAINKIT_ADMIN_TOKEN) or a file (--config);
// see --help. With admin.metrics, GET /metrics on the admin listener serves
// OpenTelemetry metrics through Prometheus. With CONSUL_HTTP_ADDR set, the
// service registers in Consul; with ETCD_ENDPOINTS (or
// registry.etcd.endpoints) set, in etcd, in kratos's key layout under
// registry.etcd.prefix (default /microservices), and logs an "etcd:
// registered" line naming the key. Without either it registers nowhere, and
// says nothing about it. The registry is not a start condition: with it
// unreachable the service starts, logs the failure, retries and registers
// once it answers (GET /state shows the registrar's last error). Logs are
// JSON lines on stderr. Exit codes: 0
// drain completed; 1 warm-up failed or something was force-closed; 128+signo
// when a second signal forced the exit; 2 for bad flags or settings (nothing
// was started).
package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/examples/httpservice/app"
	"github.com/drainkit/drainkit/registry/consul"
	"github.com/drainkit/drainkit/registry/etcd"
)

func main() { os.Exit(run(os.Args[1:])) }

// run returns the exit code, so that main's os.Exit comes last.
func run(args []string) int {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	f := &flags{}
	srv := &http.Server{Handler: app.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	return drainkit.Run(context.Background(), args,
		drainkit.WithName("httpservice"),
		drainkit.WithLogger(logger),
		drainkit.WithDefaultAdminAddr(defaultAdminAddr),
		drainkit.WithHTTPServer("http", "127.0.0.1:8080", srv),
		drainkit.WithFlags(f.define),
		// Registration, one line per registry: Consul when CONSUL_HTTP_ADDR
		// is set, etcd when registry.etcd.endpoints or ETCD_ENDPOINTS is;
		// the service listener's port, registry.address or its IP.
		consul.Register("httpservice"),
		etcd.Register("httpservice"),
		drainkit.WithSetup(func(cfg *config.Config) ([]drainkit.Option, error) {
			if err := f.validate(cfg.Timings.WarmupTimeout); err != nil {
				return nil, err
			}
			if cfg.Registry.Service == "" { // registry.service overrides --service
				cfg.Registry.Service = f.service
			}
			opts, err := telemetryOptions(cfg)
			if err != nil {
				return nil, err
			}
			opts = append(opts, f.lifecycleOptions()...)
			// The end-of-life hook: after in-flight work ended, within
			// stop.timeout, before the telemetry's flush.
			return append(opts, drainkit.OnStop("cleanup", func(context.Context) error {
				logger.Info("cleanup done")
				return nil
			})), nil
		}),
	)
}
