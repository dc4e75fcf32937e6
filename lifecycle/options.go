package lifecycle

import (
	"log/slog"
	"os"
	"syscall"
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"
)

// Options configure New. The zero value is the default lifecycle: the
// budget's default timings and checks, a 5s deregistration bound, the
// default slog logger, no observer, and SIGTERM and SIGINT starting the
// drain.
//
// There is no clock to inject. Every instant the lifecycle reads is
// time.Now: its deadlines end up in timers and in context deadlines handed
// to participants (Deregister, Confirm, AwaitIdle, the hooks, the checks),
// which run on the runtime's clock whatever the lifecycle is told, so an
// injected clock could move the timeline's offsets but not the drain. Tests
// use short real timings, or testing/synctest's bubble, whose clock is the
// runtime's.
type Options struct {
	// Timings is the whole drain budget; the zero value means
	// budget.DefaultTimings(). A non-zero value is used as given, so start
	// from budget.DefaultTimings() and change what differs.
	Timings budget.Timings
	// Checks set the readiness checks' interval, timeout and thresholds; the
	// zero value means budget.DefaultCheckOptions().
	Checks budget.CheckOptions
	// DeregisterTimeout bounds the registrars' Deregister calls at the
	// drain's start, counted from the call (key registry.deregister_timeout;
	// 0 means 5s; at most budget.MaxDuration; capped by
	// Timings.PropagationMax when that is > 0). With no propagation window,
	// Run checks at start that it fits the grace period together with
	// drain.timeout and stop.timeout, and returns a *budget.RangeError if
	// not.
	DeregisterTimeout time.Duration
	// MinIsDefault says that Timings.PropagationMin is the default, not a
	// value the operator chose (config.Config.LifecycleOptions sets it when
	// no source set propagation.min). Then the evidence may end the window
	// before min: once every registrar that can confirm
	// (DeregistrationConfirmer) has confirmed the deregistration, at least
	// one can, no request arrived for quiet and every known caller has
	// moved, the window ends at once. False (the zero value): min always
	// holds the window open.
	MinIsDefault bool
	// EvidenceDir is the directory where each drain's measured staleness
	// per caller class (identity) is kept, in drainkit-window.json, for the
	// last budget.EvidenceDrains drains (key propagation.evidence_dir;
	// empty, the default: none kept). From it the lifecycle proposes the
	// window that would have covered them (budget.WindowAdvice: in the log
	// at start and after each drain, and in Status.WindowAdvice). New
	// creates it if missing and fails with a *budget.RangeError if it
	// cannot be written.
	EvidenceDir string
	// Logger receives one line per transition and one line with the whole
	// timeline at exit; nil means slog.Default().
	Logger *slog.Logger
	// Observers see every transition and drain step (telemetry.Telemetry is
	// one). An observer that also reads the lifecycle or acts at its end, as
	// telemetry does, has a method Attach(*Lifecycle) error: New calls it
	// with the Lifecycle it creates, before returning it (so a stop hook
	// that Attach adds runs after every other stop hook), and returns its
	// error.
	Observers []Observer
	// Signals start a drain in Run; nil means SIGTERM and SIGINT. A second
	// one of them forces exit with code 128+signal number. A non-nil empty
	// slice means Run handles no signal (unlike signal.Notify, which would
	// relay all of them): the drain then starts only through Drain or Run's
	// context.
	Signals []os.Signal

	// exit replaces os.Exit for the forced exit on a second signal; for
	// tests, as tableflip injects its syscalls.
	exit func(code int)
}

// defaultDeregisterTimeout is Options.DeregisterTimeout's zero-value meaning.
const defaultDeregisterTimeout = 5 * time.Second

// withDefaults fills the zero fields of o with their defaults.
func (o Options) withDefaults() Options {
	if o.Timings == (budget.Timings{}) {
		o.Timings = budget.DefaultTimings()
	}
	if o.Checks == (budget.CheckOptions{}) {
		o.Checks = budget.DefaultCheckOptions()
	}
	if o.DeregisterTimeout == 0 {
		o.DeregisterTimeout = defaultDeregisterTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Signals == nil {
		o.Signals = []os.Signal{syscall.SIGTERM, syscall.SIGINT}
	}
	if o.exit == nil {
		o.exit = os.Exit
	}
	return o
}
