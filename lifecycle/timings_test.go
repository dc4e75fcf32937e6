package lifecycle_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
)

func TestDefaultTimingsValid(t *testing.T) {
	if err := lifecycle.DefaultTimings().Validate(); err != nil {
		t.Fatal(err)
	}
	if err := lifecycle.DefaultCheckOptions().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestTimingsValidate(t *testing.T) {
	mod := func(f func(*lifecycle.Timings)) lifecycle.Timings {
		tm := lifecycle.DefaultTimings()
		f(&tm)
		return tm
	}
	cases := []struct {
		name string
		tm   lifecycle.Timings
		key  string
	}{
		{"negative min", mod(func(t *lifecycle.Timings) { t.PropagationMin = -time.Second }), "propagation.min"},
		{"zero drain", mod(func(t *lifecycle.Timings) { t.DrainTimeout = 0 }), "drain.timeout"},
		{"zero warmup", mod(func(t *lifecycle.Timings) { t.WarmupTimeout = 0 }), "warmup.timeout"},
		{"zero stop", mod(func(t *lifecycle.Timings) { t.StopTimeout = 0 }), "stop.timeout"},
		{"huge grace", mod(func(t *lifecycle.Timings) { t.GracePeriod = 25 * time.Hour }), "grace_period"},
		{"min > max", mod(func(t *lifecycle.Timings) { t.PropagationMin = 16 * time.Second }), "propagation.min"},
		{"quiet > max", mod(func(t *lifecycle.Timings) { t.PropagationQuiet = 16 * time.Second }), "propagation.quiet"},
		{"budget", mod(func(t *lifecycle.Timings) { t.GracePeriod = 20 * time.Second }), "grace_period"},
		{"zero value", lifecycle.Timings{}, "warmup.timeout"},
	}
	for _, c := range cases {
		err := c.tm.Validate()
		var re *lifecycle.RangeError
		if !errors.As(err, &re) || re.Key != c.key {
			t.Errorf("%s: got %v, want a lifecycle.RangeError for %s", c.name, err, c.key)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.key+": ") || re.Allowed == "" {
			t.Errorf("%s: message %q must start with the key and give the range", c.name, err)
		}
	}
	noWindow := mod(func(t *lifecycle.Timings) { t.PropagationMin, t.PropagationQuiet, t.PropagationMax = 0, 0, 0 })
	if err := noWindow.Validate(); err != nil {
		t.Errorf("no window must be valid: %v", err)
	}
}

func TestCheckOptionsValidate(t *testing.T) {
	mod := func(f func(*lifecycle.CheckOptions)) lifecycle.CheckOptions {
		c := lifecycle.DefaultCheckOptions()
		f(&c)
		return c
	}
	for key, c := range map[string]lifecycle.CheckOptions{
		"checks.interval":          mod(func(c *lifecycle.CheckOptions) { c.Interval = 0 }),
		"checks.timeout":           mod(func(c *lifecycle.CheckOptions) { c.Timeout = 10 * time.Second }),
		"checks.failure_threshold": mod(func(c *lifecycle.CheckOptions) { c.FailureThreshold = -1 }),
		"checks.success_threshold": mod(func(c *lifecycle.CheckOptions) { c.SuccessThreshold = 3 }),
	} {
		var re *lifecycle.RangeError
		if err := c.Validate(); !errors.As(err, &re) || re.Key != key {
			t.Errorf("%s: got %v", key, err)
		}
	}
}

func TestNewRejectsBadTimings(t *testing.T) {
	tm := lifecycle.DefaultTimings()
	tm.PropagationMin = -1
	if _, err := lifecycle.New(lifecycle.WithTimings(tm)); err == nil || !strings.Contains(err.Error(), "propagation.min") {
		t.Fatalf("lifecycle.New with a bad timing: %v", err)
	}
}

// TestMinGracePeriodIsAccepted: the minimum that the error message names is
// accepted, and a second less is not.
func TestMinGracePeriodIsAccepted(t *testing.T) {
	fast := func(min, max time.Duration) lifecycle.Timings { // as the internal tests' fastTimings
		return lifecycle.Timings{WarmupTimeout: 5 * time.Second, PropagationMin: min, PropagationMax: max,
			DrainTimeout: time.Second, StopTimeout: time.Second, GracePeriod: max + 5*time.Second}
	}
	for _, base := range []lifecycle.Timings{lifecycle.DefaultTimings(), fast(0, 0), fast(2*time.Second, 9*time.Second)} {
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
	if got := lifecycle.DefaultTimings().MinGracePeriod(); got != 24*time.Second {
		t.Errorf("minimum for the defaults %s, want 24s", got)
	}
}

// TestTimelineLogKeysUnique: every member of the exit line's timeline group
// has its own key (a JSON object with a repeated key loses a value).
func TestTimelineLogKeysUnique(t *testing.T) {
	tl := lifecycle.Timeline{ForceClosed: 2}
	for _, name := range []string{lifecycle.StepNotReady, lifecycle.StepDeregistered, lifecycle.StepConfirmed, lifecycle.StepWindowEnded,
		lifecycle.StepListenersClosed, lifecycle.StepIdle, lifecycle.StepForceClosed, lifecycle.StepStopHooksDone} {
		tl.Steps = append(tl.Steps, lifecycle.Step{Name: name, Err: "x"})
	}
	seen := map[string]bool{}
	for _, a := range tl.LogValue().Group() {
		if seen[a.Key] {
			t.Errorf("key %q twice in the timeline log group", a.Key)
		}
		seen[a.Key] = true
	}
}
