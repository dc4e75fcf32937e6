// Command nacosservice is examples/httpservice's service registered in
// Nacos: the test child of registry/nacos (and a template for a service
// that registers there). With NACOS_SERVER_ADDR set it registers an
// ephemeral instance of --service (registry.service overrides) with the
// NACOS_* settings (see nacos.OptionsFromEnv); a bad one exits 2 before any
// listener opens, naming the variable. An operator's offline on the server
// ejects the lifecycle (cause operator, GET /state shows it) until an
// operator enables the instance again.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/examples/httpservice/app"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry/nacos"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	var service string
	var warmup time.Duration
	var lc atomic.Pointer[lifecycle.Lifecycle]
	srv := &http.Server{Handler: app.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	return drainkit.Run(context.Background(), args,
		drainkit.WithName("nacosservice"),
		drainkit.WithLogger(logger),
		drainkit.WithDefaultAdminAddr("127.0.0.1:8081"),
		drainkit.WithHTTPServer("http", "127.0.0.1:8080", srv),
		drainkit.WithFlags(func(fs *pflag.FlagSet) {
			fs.StringVar(&service, "service", "nacosservice", "service name to register in Nacos (registry.service overrides)")
			fs.DurationVar(&warmup, "warmup", 0, "simulated warm-up duration, e.g. 2s")
		}),
		drainkit.WithSetup(func(cfg *config.Config) ([]drainkit.Option, error) {
			if warmup < 0 || warmup >= cfg.Timings.WarmupTimeout {
				return nil, fmt.Errorf("--warmup: %s is out of range: must be >= 0s and < warmup.timeout (%s)", warmup, cfg.Timings.WarmupTimeout)
			}
			opts := []drainkit.Option{
				drainkit.WithRegistrar("nacos", registration(cfg, service, logger, &lc)),
				drainkit.WithLifecycle(func(l *lifecycle.Lifecycle) error { lc.Store(l); return nil }),
			}
			if warmup > 0 {
				opts = append(opts, drainkit.OnWarmup("simulated", func(ctx context.Context) error {
					t := time.NewTimer(warmup)
					defer t.Stop()
					select {
					case <-t.C:
						return nil
					case <-ctx.Done():
						return ctx.Err()
					}
				}))
			}
			return opts, nil
		}),
	)
}

// registration registers in Nacos when NACOS_SERVER_ADDR is set. Check
// validates the settings before any listener opens; Build registers the
// service listener's bound IP and port.
func registration(cfg *config.Config, service string, logger *slog.Logger, lc *atomic.Pointer[lifecycle.Lifecycle]) drainkit.Registration {
	if cfg.Registry.Service != "" {
		service = cfg.Registry.Service
	}
	return drainkit.Registration{
		// The shared registry settings; Nacos's own come from NACOS_*.
		Keys: config.SharedRegistryKeys(),
		Check: func(*config.Config) error {
			_, _, err := nacos.OptionsFromEnv(service, 1)
			return err
		},
		Build: func(cfg *config.Config, b drainkit.Bound) (lifecycle.Registrar, error) {
			tcp, ok := b.Addrs["http"].(*net.TCPAddr)
			if !ok {
				return nil, fmt.Errorf("%s is not a TCP address", b.Addrs["http"])
			}
			o, enabled, err := nacos.OptionsFromEnv(service, tcp.Port)
			if !enabled || err != nil {
				return nil, err
			}
			switch {
			case cfg.Registry.Address != "": // registry.address: e.g. the pod IP
				o.Address = cfg.Registry.Address
			case !tcp.IP.IsUnspecified():
				o.Address = tcp.IP.String()
			}
			o.Logger = logger
			o.OnOperator = func(offline bool) {
				l := lc.Load()
				if l == nil {
					return
				}
				if offline {
					_ = l.Eject("nacos: an operator disabled the instance (offline)")
				} else {
					_ = l.Restore("nacos: an operator enabled the instance")
				}
			}
			// The entry point closes the registrar (a stop hook, after the
			// drain's deregistration); its Close is bounded.
			return nacos.New(o)
		},
	}
}
