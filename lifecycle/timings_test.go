package lifecycle

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestDefaultTimingsValid(t *testing.T) {
	if err := DefaultTimings().Validate(); err != nil {
		t.Fatal(err)
	}
	if err := DefaultCheckOptions().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestTimingsValidate(t *testing.T) {
	mod := func(f func(*Timings)) Timings { tm := DefaultTimings(); f(&tm); return tm }
	cases := []struct {
		name string
		tm   Timings
		key  string
	}{
		{"negative min", mod(func(t *Timings) { t.PropagationMin = -time.Second }), "propagation.min"},
		{"zero drain", mod(func(t *Timings) { t.DrainTimeout = 0 }), "drain.timeout"},
		{"zero warmup", mod(func(t *Timings) { t.WarmupTimeout = 0 }), "warmup.timeout"},
		{"zero stop", mod(func(t *Timings) { t.StopTimeout = 0 }), "stop.timeout"},
		{"huge grace", mod(func(t *Timings) { t.GracePeriod = 25 * time.Hour }), "grace_period"},
		{"min > max", mod(func(t *Timings) { t.PropagationMin = 16 * time.Second }), "propagation.min"},
		{"quiet > max", mod(func(t *Timings) { t.PropagationQuiet = 16 * time.Second }), "propagation.quiet"},
		{"budget", mod(func(t *Timings) { t.GracePeriod = 20 * time.Second }), "grace_period"},
		{"zero value", Timings{}, "warmup.timeout"},
	}
	for _, c := range cases {
		err := c.tm.Validate()
		var re *RangeError
		if !errors.As(err, &re) || re.Key != c.key {
			t.Errorf("%s: got %v, want a RangeError for %s", c.name, err, c.key)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.key+": ") || re.Allowed == "" {
			t.Errorf("%s: message %q must start with the key and give the range", c.name, err)
		}
	}
	noWindow := mod(func(t *Timings) { t.PropagationMin, t.PropagationQuiet, t.PropagationMax = 0, 0, 0 })
	if err := noWindow.Validate(); err != nil {
		t.Errorf("no window must be valid: %v", err)
	}
}

func TestCheckOptionsValidate(t *testing.T) {
	mod := func(f func(*CheckOptions)) CheckOptions { c := DefaultCheckOptions(); f(&c); return c }
	for key, c := range map[string]CheckOptions{
		"checks.interval":          mod(func(c *CheckOptions) { c.Interval = 0 }),
		"checks.timeout":           mod(func(c *CheckOptions) { c.Timeout = 10 * time.Second }),
		"checks.failure_threshold": mod(func(c *CheckOptions) { c.FailureThreshold = -1 }),
		"checks.success_threshold": mod(func(c *CheckOptions) { c.SuccessThreshold = 3 }),
	} {
		var re *RangeError
		if err := c.Validate(); !errors.As(err, &re) || re.Key != key {
			t.Errorf("%s: got %v", key, err)
		}
	}
}

func TestNewRejectsBadTimings(t *testing.T) {
	tm := DefaultTimings()
	tm.PropagationMin = -1
	if _, err := New(WithTimings(tm)); err == nil || !strings.Contains(err.Error(), "propagation.min") {
		t.Fatalf("New with a bad timing: %v", err)
	}
}

func TestWindowEnd(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := time.Second
	tm := func(min, quiet, max time.Duration) Timings {
		return Timings{PropagationMin: min, PropagationQuiet: quiet, PropagationMax: max}
	}
	cases := []struct {
		name        string
		tm          Timings
		dereg, last time.Duration // offsets from t0
		want        time.Duration
	}{
		{"no window", tm(0, 0, 0), 0, 0, 0},
		{"min only", tm(5*s, 0, 15*s), 0, 3 * s, 5 * s},
		{"min counts from deregistration", tm(5*s, 0, 15*s), 2 * s, 0, 7 * s},
		{"quiet after min, no arrivals", tm(5*s, 1*s, 15*s), 0, 0, 5 * s},
		{"late arrival extends", tm(5*s, 1*s, 15*s), 0, 7 * s, 8 * s},
		{"arrivals stop before min", tm(5*s, 1*s, 15*s), 0, 2 * s, 5 * s},
		{"capped at max", tm(5*s, 1*s, 15*s), 0, 14900 * time.Millisecond, 15 * s},
		{"slow deregistration capped", tm(5*s, 1*s, 6*s), 4 * s, 0, 6 * s},
		{"quiet only", tm(0, 1*s, 15*s), 0, 0, 1 * s},
	}
	for _, c := range cases {
		got := windowEnd(c.tm, t0, t0.Add(c.dereg), t0.Add(c.last)).Sub(t0)
		if got != c.want {
			t.Errorf("%s: window ends at %v, want %v", c.name, got, c.want)
		}
	}
}

// TestMinGracePeriodIsAccepted: the minimum that the error message names is
// accepted, and a second less is not.
func TestMinGracePeriodIsAccepted(t *testing.T) {
	for _, base := range []Timings{DefaultTimings(), fastTimings(0, 0, 0), fastTimings(2*time.Second, 0, 9*time.Second)} {
		base.GracePeriod = time.Second
		err := base.Validate()
		min := base.MinGracePeriod()
		if err == nil || !strings.Contains(err.Error(), "must be >= "+min.String()) {
			t.Fatalf("error %v does not name the minimum %s", err, min)
		}
		base.GracePeriod = min
		if err := base.Validate(); err != nil {
			t.Errorf("the named minimum %s is rejected: %v", min, err)
		}
		base.GracePeriod = min - time.Second
		if err := base.Validate(); err == nil {
			t.Errorf("%s (a second under the minimum) is accepted", base.GracePeriod)
		}
	}
	if got := DefaultTimings().MinGracePeriod(); got != 24*time.Second {
		t.Errorf("minimum for the defaults %s, want 24s", got)
	}
}

// TestTimelineLogKeysUnique: every member of the exit line's timeline group
// has its own key (a JSON object with a repeated key loses a value).
func TestTimelineLogKeysUnique(t *testing.T) {
	tl := Timeline{ForceClosed: 2}
	for _, name := range []string{StepNotReady, StepDeregistered, StepConfirmed, StepWindowEnded,
		StepListenersClosed, StepIdle, StepForceClosed, StepStopHooksDone} {
		tl.Steps = append(tl.Steps, Step{Name: name, Err: "x"})
	}
	seen := map[string]bool{}
	for _, a := range tl.LogValue().Group() {
		if seen[a.Key] {
			t.Errorf("key %q twice in the timeline log group", a.Key)
		}
		seen[a.Key] = true
	}
}
