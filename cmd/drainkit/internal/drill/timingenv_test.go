package drill

import (
	"slices"
	"strings"
	"testing"
)

// A propagation.min no source set stays a default in the replicas (issue
// 32: a confirmed deregistration and every caller moved then end the window
// before it); one set anywhere is passed on.
func TestTimingEnvLeavesDefaultMin(t *testing.T) {
	c := DefaultConfig()
	hasMin := func(env []string) bool {
		return slices.ContainsFunc(env, func(s string) bool { return strings.HasPrefix(s, "DRAINKIT_PROPAGATION_MIN=") })
	}
	c.TimingSources = map[string]string{"propagation.min": "default"}
	if env := c.timingEnv(); hasMin(env) || len(env) != 6 {
		t.Errorf("default min: %v, want the other six timings and no DRAINKIT_PROPAGATION_MIN", env)
	}
	c.TimingSources = map[string]string{"propagation.min": "flag --propagation-min"}
	if env := c.timingEnv(); !hasMin(env) {
		t.Errorf("min from a flag: %v lacks DRAINKIT_PROPAGATION_MIN", env)
	}
	c.TimingSources = nil
	if env := c.timingEnv(); !hasMin(env) {
		t.Errorf("no sources known: %v lacks DRAINKIT_PROPAGATION_MIN", env)
	}
}
