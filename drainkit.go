// Package drainkit is the one-call entry point: Main loads the settings
// (DRAINKIT_* variables, --config, one flag per key, --admin-addr and one
// --<name>-addr per listener), builds the lifecycle, opens and serves the
// admin listener (probes, preStop endpoint, optional /metrics) with timeouts
// and a connection cap, opens the service listeners, logs a start line with
// the PID, version, addresses and registrars ("none" when it registers
// nowhere), runs until drained and returns the exit code:
//
//	func main() {
//		os.Exit(drainkit.Main(drainkit.WithHTTP("http", ":8080", mux)))
//	}
//
// Every setting and every registrar is checked before any listener opens. The
// exit codes are DESIGN.md section 5's: 0 drain completed; 1 warm-up failed
// or something was force-closed; 128+signal when a second signal forced the
// exit; and 2 for bad flags or settings (nothing was started). --help prints
// the flags and exits 0, --version the version line.
//
// A DRAINKIT_* variable that is not a setting (a typo such as
// DRAINKIT_PROPAGATION_MNI) is logged as a warning naming the closest
// setting's variable, before any listener opens; with a bad setting, the
// warnings precede the error line (see config.CheckEnv).
//
// admin.metrics (DRAINKIT_ADMIN_METRICS=true) needs a /metrics handler from
// WithAdminHandler (a telemetry-using program supplies one, e.g. from
// telemetry.NewPrometheus); without one Main refuses to start (exit 2)
// rather than silently serving no metrics.
//
// The root package imports no registry client, gRPC or OpenTelemetry: those
// plug in through WithServer, WithRegistrar, WithObserver, WithAdminHandler and
// WithSetup. The packages lifecycle, probes, httpdrain, grpcdrain and config
// stay usable on their own for programs that wire themselves.
package drainkit

import (
	"context"
	"os"
	"path/filepath"
)

// Main runs the service with os.Args[1:] and returns the exit code; pass it
// to os.Exit, as the last thing main does.
func Main(opts ...Option) int {
	return Run(context.Background(), os.Args[1:], opts...)
}

// Run is Main with explicit arguments (flags, without the program name) and a
// context: cancelling ctx starts the drain, like SIGTERM. It returns the exit
// code once the drain is over (or 2 at once for a bad setting).
func Run(ctx context.Context, args []string, opts ...Option) int {
	s := &service{name: filepath.Base(os.Args[0]), out: os.Stderr, stdout: os.Stdout, adminLimits: DefaultAdminLimits()}
	for _, o := range opts {
		o(s)
	}
	return s.run(ctx, args)
}
