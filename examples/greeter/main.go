// Command greeter is a cobra + viper service whose one configuration (one
// file, one env prefix, its flags) also carries drainkit's settings, under
// the sub-tree drainkit:
//
//	greeter [--config greeter.yaml] [--http-addr 127.0.0.1:8080] [--greeting hello]
//	        [--admin-addr 127.0.0.1:8081] [drainkit keys: --propagation-min 1s ...]
//
// A file for it:
//
//	greeting: hello
//	http-addr: 127.0.0.1:8080
//	drainkit:
//	  admin:
//	    addr: 127.0.0.1:8081
//	  propagation:
//	    min: 1s
//
// Every key follows viper's precedence, the application's: a flag set on
// the command line (--greeting, --propagation-min), then a GREETER_*
// variable (GREETER_GREETING, GREETER_DRAINKIT_PROPAGATION_MIN; key
// upper-cased, '.' and '-' -> '_'), then the file, then the default.
// drainkit's keys are checked with drainkit's rules before any listener
// opens: a bad value, or a key set twice in the file, exits 2 with one line
// naming the key, the value, where it came from and the allowed range.
//
// The program wires drainkit itself (lifecycle, probes, httpdrain), as a
// program with its own entry point does: GET / answers the greeting; the
// admin listener serves the probes, GET /state and POST /drain. Logs are
// JSON lines on stderr, with a "started" line naming both addresses. Exit
// codes: 0 drain completed; 1 something was force-closed; 128+signo when a
// second signal forced the exit; 2 bad flags or settings (nothing started).
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
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/probes"
)

// envPrefix is the application's env prefix: GREETER_GREETING,
// GREETER_DRAINKIT_PROPAGATION_MIN.
const envPrefix = "GREETER"

func main() { os.Exit(run(os.Args[1:], os.Stderr)) }

// run executes the command and returns the exit code.
func run(args []string, stderr io.Writer) int {
	code := 0
	cmd := &cobra.Command{
		Use:           "greeter",
		Short:         "a greeting service whose viper configuration carries drainkit's settings under drainkit:",
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	f := cmd.Flags()
	f.String("config", "", "configuration file, .yaml, .yml, .toml or .json (env GREETER_CONFIG)")
	f.String("http-addr", "127.0.0.1:8080", "service listener, host:port (env GREETER_HTTP_ADDR)")
	f.String("greeting", "hello", "what GET / answers (env GREETER_GREETING)")
	config.BindFlags(f) // --admin-addr, --propagation-min, ...; leaves our --config alone
	v, err := newViper(f)
	if err != nil {
		fmt.Fprintf(stderr, "greeter: %v\n", err)
		return 2
	}
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if file := v.GetString("config"); file != "" {
			v.SetConfigFile(file)
			if err := v.ReadInConfig(); err != nil {
				return fmt.Errorf("--config %s: %w", file, err)
			}
		}
		cfg, err := config.Load(config.Sources{Viper: v, Flags: cmd.Flags()})
		if err != nil {
			return err
		}
		code, err = serve(cfg, v, stderr)
		return err
	}
	cmd.SetArgs(args)
	cmd.SetOut(stderr)
	cmd.SetErr(stderr)
	if err := cmd.Execute(); err != nil { // a usage error: cobra's (an unknown flag) or ours
		fmt.Fprintf(stderr, "greeter: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
		return 2
	}
	return code
}

// newViper builds the application's configuration the way cobra programs
// do, with drainkit's keys bound under drainkit (before the flags are
// parsed, so that --help names the GREETER_DRAINKIT_* variables).
func newViper(f *pflag.FlagSet) (*viper.Viper, error) {
	v := viper.New()
	v.SetEnvPrefix(envPrefix)
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_", "-", "_"))
	v.AutomaticEnv()
	if err := v.BindPFlags(f); err != nil { // the application's own flags
		return nil, err
	}
	config.BindViper(v, f, config.DefaultViperKey) // drainkit's flags and variables under drainkit.
	return v, nil
}

// serve runs the service until drained and returns the exit code; an error
// means nothing was started.
func serve(cfg *config.Config, v *viper.Viper, stderr io.Writer) (int, error) {
	if cfg.Admin.Metrics {
		return 0, errors.New("admin.metrics: greeter serves no /metrics; leave it false")
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	for _, w := range cfg.Warnings() {
		logger.Warn(w.String(), "env", w.Var, "did_you_mean", w.Suggestion)
	}
	lo := cfg.LifecycleOptions()
	lo.Logger = logger
	lc, err := lifecycle.New(lo)
	if err != nil {
		return 0, err
	}
	ph, err := probes.New(lc, probes.Options{Token: string(cfg.Admin.Token), Logger: logger})
	if err != nil {
		return 0, err
	}
	defer ph.Close()
	adminLn, err := net.Listen("tcp", cfg.Admin.Addr)
	if err != nil {
		return 0, fmt.Errorf("admin.addr %s from %s: %w", cfg.Admin.Addr, cfg.Source("admin.addr"), err)
	}
	httpLn, err := net.Listen("tcp", v.GetString("http-addr"))
	if err != nil {
		_ = adminLn.Close()
		return 0, fmt.Errorf("http-addr: %w", err)
	}
	greeting := v.GetString("greeting")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		if _, err := fmt.Fprintln(w, greeting); err != nil {
			logger.Debug("writing the response", "error", err.Error()) // the client went away
		}
	})
	lc.AddServer("http", httpdrain.New(&http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, httpLn))

	admin := &http.Server{Handler: ph, ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute}
	adminDone := make(chan error, 1)
	go func() { adminDone <- admin.Serve(adminLn) }()
	logger.Info("started", "pid", os.Getpid(), "admin", adminLn.Addr().String(), "http", httpLn.Addr().String(),
		"settings", cfg, "budget", cfg.Describe())

	runErr := lc.Run(context.Background())

	// The admin listener served the probes through the whole drain; it
	// closes last.
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = admin.Shutdown(ctx)
	if err := <-adminDone; err != nil && !errors.Is(err, http.ErrServerClosed) {
		logger.Warn("admin listener failed", "error", err.Error())
	}
	return lifecycle.ExitCode(runErr), nil
}
