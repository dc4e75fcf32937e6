package budget_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"
)

func TestDefaultTimingsValid(t *testing.T) {
	if err := budget.DefaultTimings().Validate(); err != nil {
		t.Fatal(err)
	}
	if err := budget.DefaultCheckOptions().Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestTimingsValidate(t *testing.T) {
	mod := func(f func(*budget.Timings)) budget.Timings {
		tm := budget.DefaultTimings()
		f(&tm)
		return tm
	}
	cases := []struct {
		name string
		tm   budget.Timings
		key  string
	}{
		{"negative min", mod(func(t *budget.Timings) { t.PropagationMin = -time.Second }), "propagation.min"},
		{"zero drain", mod(func(t *budget.Timings) { t.DrainTimeout = 0 }), "drain.timeout"},
		{"zero warmup", mod(func(t *budget.Timings) { t.WarmupTimeout = 0 }), "warmup.timeout"},
		{"zero stop", mod(func(t *budget.Timings) { t.StopTimeout = 0 }), "stop.timeout"},
		{"huge grace", mod(func(t *budget.Timings) { t.GracePeriod = 25 * time.Hour }), "grace_period"},
		{"min > max", mod(func(t *budget.Timings) { t.PropagationMin = 16 * time.Second }), "propagation.min"},
		{"quiet > max", mod(func(t *budget.Timings) { t.PropagationQuiet = 16 * time.Second }), "propagation.quiet"},
		{"budget", mod(func(t *budget.Timings) { t.GracePeriod = 20 * time.Second }), "grace_period"},
		{"zero value", budget.Timings{}, "warmup.timeout"},
	}
	for _, c := range cases {
		err := c.tm.Validate()
		var re *budget.RangeError
		if !errors.As(err, &re) || re.Key != c.key {
			t.Errorf("%s: got %v, want a budget.RangeError for %s", c.name, err, c.key)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.key+": ") || re.Allowed == "" {
			t.Errorf("%s: message %q must start with the key and give the range", c.name, err)
		}
	}
	noWindow := mod(func(t *budget.Timings) { t.PropagationMin, t.PropagationQuiet, t.PropagationMax = 0, 0, 0 })
	if err := noWindow.Validate(); err != nil {
		t.Errorf("no window must be valid: %v", err)
	}
}

func TestCheckOptionsValidate(t *testing.T) {
	mod := func(f func(*budget.CheckOptions)) budget.CheckOptions {
		c := budget.DefaultCheckOptions()
		f(&c)
		return c
	}
	for key, c := range map[string]budget.CheckOptions{
		"checks.interval":          mod(func(c *budget.CheckOptions) { c.Interval = 0 }),
		"checks.timeout":           mod(func(c *budget.CheckOptions) { c.Timeout = 10 * time.Second }),
		"checks.failure_threshold": mod(func(c *budget.CheckOptions) { c.FailureThreshold = -1 }),
		"checks.success_threshold": mod(func(c *budget.CheckOptions) { c.SuccessThreshold = 3 }),
	} {
		var re *budget.RangeError
		if err := c.Validate(); !errors.As(err, &re) || re.Key != key {
			t.Errorf("%s: got %v", key, err)
		}
	}
}

// TestMinGracePeriodIsAccepted: the minimum that the error message names is
// accepted, and a second less is not.
func TestMinGracePeriodIsAccepted(t *testing.T) {
	fast := func(min, max time.Duration) budget.Timings { // as the internal tests' fastTimings
		return budget.Timings{WarmupTimeout: 5 * time.Second, PropagationMin: min, PropagationMax: max,
			DrainTimeout: time.Second, StopTimeout: time.Second, GracePeriod: max + 5*time.Second}
	}
	for _, base := range []budget.Timings{budget.DefaultTimings(), fast(0, 0), fast(2*time.Second, 9*time.Second)} {
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
	if got := budget.DefaultTimings().MinGracePeriod(); got != 24*time.Second {
		t.Errorf("minimum for the defaults %s, want 24s", got)
	}
}

// Every key out of range is reported at once (RangeErrors), so one edit
// fixes them all; the window's order and the budget wait until each key is
// in range, since a key out of range would only make them report its
// consequence.
func TestValidateReportsEveryKey(t *testing.T) {
	tm := budget.DefaultTimings()
	tm.DrainTimeout, tm.StopTimeout = -time.Second, 0
	err := tm.Validate()
	var keys []string
	budget.EachRangeError(err, func(re *budget.RangeError) { keys = append(keys, re.Key) })
	if !slices.Equal(keys, []string{"drain.timeout", "stop.timeout"}) {
		t.Errorf("Validate() = %v: reported %v, want drain.timeout and stop.timeout", err, keys)
	}
	var re *budget.RangeError
	if !errors.As(err, &re) || re.Key != "drain.timeout" {
		t.Errorf("errors.As(%v) = %v, want the first, drain.timeout", err, re)
	}
	c := budget.DefaultCheckOptions()
	c.Interval, c.FailureThreshold = 0, 0
	keys = nil
	budget.EachRangeError(c.Validate(), func(re *budget.RangeError) { keys = append(keys, re.Key) })
	if !slices.Equal(keys, []string{"checks.interval", "checks.failure_threshold"}) {
		t.Errorf("CheckOptions.Validate(): reported %v, want checks.interval and checks.failure_threshold", keys)
	}
}
