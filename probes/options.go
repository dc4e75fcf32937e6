package probes

import (
	"log/slog"
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"
)

// Default watchdog settings.
const (
	DefaultWatchdogInterval  = time.Second
	DefaultWatchdogThreshold = 10 * time.Second
)

// Options configure New. The zero value is valid: loopback-only operator
// actions, the default watchdog and slog.Default().
type Options struct {
	// Token, if not empty, is the bearer token that POST /drain, /eject and
	// /restore require from every caller, loopback included
	// ("Authorization: Bearer <Token>"). Empty means those endpoints accept
	// loopback peers (127.0.0.0/8, ::1) only. The token is compared in
	// constant time and never logged or shown in GET /state.
	Token string
	// WatchdogInterval is how often the liveness watchdog ticks (0 means
	// DefaultWatchdogInterval, 1s). Each tick takes a snapshot of the
	// lifecycle, so a deadlocked lifecycle stops the ticks. Allowed: > 0 and
	// <= 1m.
	WatchdogInterval time.Duration
	// WatchdogThreshold is how old the last tick may be before /livez fails
	// (0 means DefaultWatchdogThreshold, 10s). Allowed: >= 2 *
	// WatchdogInterval and <= 1h.
	WatchdogThreshold time.Duration
	// ServingzFailsDraining makes GET /servingz fail from the drain's start,
	// exactly like /readyz (key admin.servingz_draining: false). The zero
	// value keeps it passing during a drain the kubelet started (a preStop
	// hook's POST /drain?wait=propagation, or SIGTERM/SIGINT) until the
	// listeners close, so that a terminating pod stays "serving" in its
	// EndpointSlice and kube-proxy can fall back to it when no endpoint is
	// ready (KEP-1669; DESIGN.md section 2).
	ServingzFailsDraining bool
	// Logger receives one line per operator action (path, peer, outcome).
	// Nil means slog.Default().
	Logger *slog.Logger
}

// withDefaults fills zero fields and validates the rest. It returns a
// *budget.RangeError naming the field.
func (o Options) withDefaults() (Options, error) {
	if o.WatchdogInterval == 0 {
		o.WatchdogInterval = DefaultWatchdogInterval
	}
	if o.WatchdogThreshold == 0 {
		o.WatchdogThreshold = DefaultWatchdogThreshold
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	switch {
	case o.WatchdogInterval < 0 || o.WatchdogInterval > time.Minute:
		return o, &budget.RangeError{Key: "probes.watchdog_interval", Value: o.WatchdogInterval.String(),
			Allowed: "must be > 0 and <= 1m0s"}
	case o.WatchdogThreshold < 2*o.WatchdogInterval || o.WatchdogThreshold > time.Hour:
		return o, &budget.RangeError{Key: "probes.watchdog_threshold", Value: o.WatchdogThreshold.String(),
			Allowed: "must be >= 2 * probes.watchdog_interval (" + (2 * o.WatchdogInterval).String() + ") and <= 1h0m0s"}
	}
	return o, nil
}
