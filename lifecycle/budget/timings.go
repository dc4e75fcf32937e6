package budget

import (
	"fmt"
	"time"
)

// Timings are the drain budget of DESIGN.md section 3. All fields are
// durations, each at most MaxDuration (24h); use DefaultTimings and override
// what differs. The zero value is
// not useful: Validate rejects a zero WarmupTimeout, DrainTimeout, StopTimeout
// or GracePeriod.
type Timings struct {
	// WarmupTimeout bounds all warm-up hooks together (key warmup.timeout,
	// default 60s, > 0). Exceeding it fails warm-up: exit code 1.
	WarmupTimeout time.Duration
	// PropagationMin is the least time to keep serving after going not-ready
	// and deregistering (key propagation.min, default 5s, >= 0).
	PropagationMin time.Duration
	// PropagationQuiet: after PropagationMin, keep serving until no request
	// has arrived for this long (key propagation.quiet, default 1s, >= 0).
	PropagationQuiet time.Duration
	// PropagationMax caps the window, counted from the drain's start (key
	// propagation.max, default 12s, >= PropagationMin and >= PropagationQuiet).
	// Min, quiet and max all 0 means no window.
	PropagationMax time.Duration
	// DrainTimeout is how long in-flight work may run after the listeners
	// close; what remains is force-closed (key drain.timeout, default 6s, > 0).
	DrainTimeout time.Duration
	// StopTimeout bounds all stop hooks together (key stop.timeout, default
	// 3s, > 0).
	StopTimeout time.Duration
	// GracePeriod is the whole budget from the drain's start, normally
	// Kubernetes' terminationGracePeriodSeconds minus 5s of pod slack for the
	// preStop hook's exec and the process exit (key grace_period, default
	// 25s, for the default 30s terminationGracePeriodSeconds).
	// PropagationMax + DrainTimeout + StopTimeout + Margin() must fit.
	GracePeriod time.Duration
}

// DefaultTimings returns the defaults of DESIGN.md section 3, which fit
// Kubernetes' default 30 s terminationGracePeriodSeconds with 5 s of pod
// slack: grace_period 25s >= propagation.max 12s + drain.timeout 6s +
// stop.timeout 3s + margin 2.5s = 23.5s.
func DefaultTimings() Timings {
	return Timings{
		WarmupTimeout:    60 * time.Second,
		PropagationMin:   5 * time.Second,
		PropagationQuiet: 1 * time.Second,
		PropagationMax:   12 * time.Second,
		DrainTimeout:     6 * time.Second,
		StopTimeout:      3 * time.Second,
		GracePeriod:      25 * time.Second,
	}
}

// PodSlack is how much longer than GracePeriod Kubernetes'
// terminationGracePeriodSeconds must be: the kubelet's clock starts when it
// begins to terminate the pod, before it execs the preStop hook; the
// drain's grace period starts later, when the hook's POST /drain reaches
// the service (the container runtime's exec takes from a fraction of a
// second to seconds on a loaded node). After the drain, the process must
// still exit and the runtime notice. 5 s covers both with room to spare; it
// is why the default GracePeriod is 25s, for Kubernetes' default
// terminationGracePeriodSeconds of 30.
const PodSlack = 5 * time.Second

// MaxDuration is the largest value any timing key accepts (24h).
const MaxDuration = 24 * time.Hour

// SyncGrace is how long the drain waits for a registrar's Sync, running at
// the drain's start, to return after its context was cancelled, before it
// deregisters anyway. With no propagation window it comes before the
// listeners close, so CheckDeregisterBudget counts it.
const SyncGrace = 500 * time.Millisecond

// Margin is the slack the budget check keeps inside GracePeriod for
// deregistration, scheduling and process exit: 10% of GracePeriod, at least 1s.
func (t Timings) Margin() time.Duration {
	m := t.GracePeriod / 10
	if m < time.Second {
		m = time.Second
	}
	return m
}

// Validate checks each key's range, the window's order (min <= max,
// quiet <= max) and the budget. It returns a *RangeError naming the key, or
// RangeErrors when several keys are out of range, or nil. The order and the
// budget are checked only once every key is in range, since a key out of
// range would make them report a consequence, not the cause.
func (t Timings) Validate() error {
	type field struct {
		key      string
		v        time.Duration
		positive bool
	}
	var errs []*RangeError
	for _, f := range []field{
		{"warmup.timeout", t.WarmupTimeout, true},
		{"propagation.min", t.PropagationMin, false},
		{"propagation.quiet", t.PropagationQuiet, false},
		{"propagation.max", t.PropagationMax, false},
		{"drain.timeout", t.DrainTimeout, true},
		{"stop.timeout", t.StopTimeout, true},
		{"grace_period", t.GracePeriod, true},
	} {
		switch {
		case f.positive && f.v <= 0:
			errs = append(errs, &RangeError{f.key, f.v.String(), "must be > 0 and <= " + MaxDuration.String()})
		case f.v < 0:
			errs = append(errs, &RangeError{f.key, f.v.String(), "must be >= 0 and <= " + MaxDuration.String()})
		case f.v > MaxDuration:
			errs = append(errs, &RangeError{f.key, f.v.String(), "must be <= " + MaxDuration.String()})
		}
	}
	if len(errs) > 0 {
		return joinRange(errs)
	}
	if t.PropagationMin > t.PropagationMax {
		errs = append(errs, &RangeError{"propagation.min", t.PropagationMin.String(),
			"must be <= propagation.max (" + t.PropagationMax.String() + ")"})
	}
	if t.PropagationQuiet > t.PropagationMax {
		errs = append(errs, &RangeError{"propagation.quiet", t.PropagationQuiet.String(),
			"must be <= propagation.max (" + t.PropagationMax.String() + ")"})
	}
	if len(errs) > 0 {
		return joinRange(errs)
	}
	if need := t.PropagationMax + t.DrainTimeout + t.StopTimeout + t.Margin(); need > t.GracePeriod {
		return &RangeError{"grace_period", t.GracePeriod.String(), fmt.Sprintf(
			"must be >= %s: propagation.max + drain.timeout + stop.timeout (%s + %s + %s) + a margin of 10%% of grace_period, at least 1s",
			t.MinGracePeriod(), t.PropagationMax, t.DrainTimeout, t.StopTimeout)}
	}
	return nil
}

// MinGracePeriod is the smallest whole-second GracePeriod that Validate
// accepts with these PropagationMax, DrainTimeout and StopTimeout: their sum
// plus Margin, which itself grows with the grace period, rounded up to a
// whole second (the exact bound may be a fraction of a second lower).
func (t Timings) MinGracePeriod() time.Duration {
	base := t.PropagationMax + t.DrainTimeout + t.StopTimeout
	g := base + time.Second // margin 1s while grace_period <= 10s
	if g > 10*time.Second {
		g = (base*10 + 8) / 9 // g - g/10 >= base
	}
	if r := g % time.Second; r != 0 {
		g += time.Second - r
	}
	return g
}

// CheckDeregisterBudget checks registry.deregister_timeout d for an instance
// that has a registrar. With a propagation window, deregistration runs
// inside it (capped by propagation.max), so any d fits. With no window (min,
// quiet and max 0) it comes before the listeners close, so d + 500ms (the wait for a running Sync) +
// DrainTimeout + StopTimeout + Margin() must fit GracePeriod. It returns a
// *RangeError naming registry.deregister_timeout and its allowed range, or
// nil. drainkit.Main checks it before any listener opens;
// lifecycle.Lifecycle.Run checks it again once the registrars are known.
func (t Timings) CheckDeregisterBudget(d time.Duration) error {
	if t.PropagationMax > 0 {
		return nil
	}
	rest := SyncGrace + t.DrainTimeout + t.StopTimeout + t.Margin()
	if d+rest <= t.GracePeriod {
		return nil
	}
	rule := fmt.Sprintf("with a registrar and no propagation window (propagation.min, propagation.quiet and propagation.max 0), "+
		"registry.deregister_timeout + %s (the wait for a running Sync) + drain.timeout + stop.timeout + margin must fit grace_period %s",
		SyncGrace, t.GracePeriod)
	if room := t.GracePeriod - rest; room > 0 {
		return &RangeError{"registry.deregister_timeout", d.String(), "must be > 0s and <= " + room.String() + ": " + rule}
	}
	return &RangeError{"registry.deregister_timeout", d.String(), "no value fits: " + rule +
		"; raise grace_period or set a propagation window"}
}
