// Command nacosservice is a service registered in Nacos: the test child of
// registry/nacos (and a template for a service that registers there). It
// answers GET / (what the tests' consumers call) with one line; it has no
// handlers of examples/httpservice's, so that registry/nacos, a module
// users require, needs no examples module (issue 33). With registry.nacos.server_addr (or
// NACOS_SERVER_ADDR) set it registers an ephemeral instance of
// registry.service (default "nacosservice") with the registry.nacos.*
// settings, wired in the one line nacos.Register; a bad one exits 2 before
// any listener opens, naming the key. An operator's offline on the server
// ejects the lifecycle (cause operator, GET /state shows it) until an
// operator enables the instance again; that needs the credentials of a
// Nacos admin user (registry.nacos.username and registry.nacos.password)
// on a Nacos 3 server with its default settings.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/registry/nacos"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	var warmup time.Duration
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", hello)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelWarn)}
	return drainkit.Run(context.Background(), args,
		drainkit.WithName("nacosservice"),
		drainkit.WithLogger(logger),
		drainkit.WithDefaultAdminAddr("127.0.0.1:8081"),
		drainkit.WithHTTPServer("http", "127.0.0.1:8080", srv),
		nacos.Register("nacosservice"),
		drainkit.WithFlags(func(fs *pflag.FlagSet) {
			fs.DurationVar(&warmup, "warmup", 0, "simulated warm-up duration, e.g. 2s")
		}),
		drainkit.WithSetup(func(cfg *config.Config) ([]drainkit.Option, error) {
			if warmup < 0 || warmup >= cfg.Timings.WarmupTimeout {
				return nil, fmt.Errorf("--warmup: %s is out of range: must be >= 0s and < warmup.timeout (%s)", warmup, cfg.Timings.WarmupTimeout)
			}
			if warmup == 0 {
				return nil, nil
			}
			return []drainkit.Option{drainkit.OnWarmup("simulated", func(ctx context.Context) error {
				return syncx.Sleep(ctx, warmup)
			})}, nil
		}),
	)
}

// hello answers GET / with one line naming the service.
func hello(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "hello from nacosservice\n")
}
