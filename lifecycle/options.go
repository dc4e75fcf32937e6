package lifecycle

import (
	"log/slog"
	"os"
	"time"
)

// Option configures New.
type Option func(*options)

// options has no clock. Every instant the lifecycle reads is time.Now: its
// deadlines end up in timers and in context deadlines handed to
// participants (Deregister, Confirm, AwaitIdle, the hooks, the checks), and
// those run on the runtime's clock whatever the lifecycle is told, so an
// injected clock could move the timeline's offsets but not the drain. Tests
// use short real timings instead, and order on channels and observers, not
// on the clock.
type options struct {
	timings    Timings
	checks     CheckOptions
	deregister time.Duration
	logger     *slog.Logger
	observers  []Observer
	signals    []os.Signal
	exit       func(code int)
}

// WithTimings replaces the whole drain budget (default DefaultTimings()).
func WithTimings(t Timings) Option { return func(o *options) { o.timings = t } }

// WithCheckOptions sets the readiness-check interval, timeout and thresholds
// (default DefaultCheckOptions()).
func WithCheckOptions(c CheckOptions) Option { return func(o *options) { o.checks = c } }

// WithDeregisterTimeout bounds the registrars' Deregister calls at the drain's
// start, counted from the call (default 5s, key registry.deregister_timeout;
// capped by Timings.PropagationMax when that is > 0). With no propagation
// window, Run checks at start that it fits the grace period together with
// drain.timeout and stop.timeout, and returns a *RangeError if not.
func WithDeregisterTimeout(d time.Duration) Option { return func(o *options) { o.deregister = d } }

// WithLogger sets the slog logger (default slog.Default()). The lifecycle logs
// one line per transition and one line with the whole timeline at exit.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithObserver adds an Observer (e.g. telemetry.Telemetry). An observer
// that also reads the lifecycle, as telemetry's observable instruments do,
// has a method Attach(*Lifecycle) error: New calls it with the Lifecycle it
// creates, so the observer reads the one it observes, and returns its error.
func WithObserver(obs Observer) Option {
	return func(o *options) { o.observers = append(o.observers, obs) }
}

// WithSignals sets the signals that start a drain in Run (default SIGTERM and
// SIGINT). A second one of them forces exit with code 128+signal number. No
// arguments means Run handles no signals (unlike signal.Notify, which would
// relay all of them): the drain then starts only through Drain or Run's
// context.
func WithSignals(sigs ...os.Signal) Option { return func(o *options) { o.signals = sigs } }

// withExitFunc replaces os.Exit for the forced exit on a second signal; for
// tests, as tableflip injects its syscalls.
func withExitFunc(exit func(code int)) Option { return func(o *options) { o.exit = exit } }
