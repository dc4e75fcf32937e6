package config_test

import (
	"strings"
	"testing"

	"github.com/drainkit/drainkit/config"
)

// TestCheckEnvSuggestions: an unknown DRAINKIT_* variable gets the closest
// key's variable (or DRAINKIT_CONFIG) when it is within edit distance 2,
// a swap of adjacent letters counting 1 and case ignored, and none
// otherwise.
func TestCheckEnvSuggestions(t *testing.T) {
	for _, c := range []struct {
		name, want string
	}{
		{"DRAINKIT_PROPAGATION_MNI", "DRAINKIT_PROPAGATION_MIN"},     // swap: 1
		{"DRAINKIT_PROPAGATION_MN", "DRAINKIT_PROPAGATION_MIN"},      // deletion
		{"DRAINKIT_PROPAGATION_MIIN", "DRAINKIT_PROPAGATION_MIN"},    // insertion
		{"DRAINKIT_PROPOGATION_MAX", "DRAINKIT_PROPAGATION_MAX"},     // substitution
		{"DRAINKIT_PROPAGATOIN_QUEIT", "DRAINKIT_PROPAGATION_QUIET"}, // two swaps: 2
		{"DRAINKIT_STP_TIMOUT", "DRAINKIT_STOP_TIMEOUT"},             // two deletions: 2
		{"DRAINKIT_GRACEPERIOD", "DRAINKIT_GRACE_PERIOD"},
		{"DRAINKIT_DRAIN_TIMEOUTS", "DRAINKIT_DRAIN_TIMEOUT"},
		{"DRAINKIT_REGISTRY_ETCD_TLL", "DRAINKIT_REGISTRY_ETCD_TTL"},
		{"DRAINKIT_ADMIN_ADRR", "DRAINKIT_ADMIN_ADDR"},
		{"DRAINKIT_CONIFG", "DRAINKIT_CONFIG"},
		{"DRAINKIT_propagation_min", "DRAINKIT_PROPAGATION_MIN"}, // case: read only as spelled
		{"drainkit_drain_timeout", "DRAINKIT_DRAIN_TIMEOUT"},
		{"DRAINKIT_PROPAGATION_XYZ", ""}, // 3 from _MIN and _MAX
		{"DRAINKIT_STP_TIMOT", ""},       // 3 deletions
		{"DRAINKIT_PROPAGATION", ""},
		{"DRAINKIT_UNRELATED", ""},
		{"DRAINKIT_", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := config.CheckEnv([]string{c.name + "=6s"})
			if len(got) != 1 || got[0].Var != c.name || got[0].Suggestion != c.want {
				t.Fatalf("CheckEnv = %+v, want one warning for %s suggesting %q", got, c.name, c.want)
			}
			s := got[0].String()
			wantS := "env " + c.name + " is not a drainkit setting and is ignored"
			if c.want != "" {
				wantS += "; did you mean " + c.want + "?"
			}
			if s != wantS {
				t.Errorf("String() = %q, want %q", s, wantS)
			}
		})
	}
}

// TestCheckEnvKnown: the keys' variables, DRAINKIT_CONFIG and the tests' and
// scripts' own variables, empty values and other prefixes warn nothing.
func TestCheckEnvKnown(t *testing.T) {
	env := []string{"DRAINKIT_CONFIG=/etc/drainkit.yaml", "DRAINKIT_CONSUL_BIN=/x", "DRAINKIT_ETCD_BIN=/x",
		"DRAINKIT_CACHE=/x", "DRAINKIT_GO=go", "DRAINKIT_CHROMIUM=/x", "DRAINKIT_KEEP_SCREENSHOT=/x",
		"DRAINKIT_TOOLBIN_TEST=/x", "DRAINKIT_PROPAGATION_MNI=", "PROPAGATION_MNI=6s", "XDRAINKIT_FOO=1", "DRAINKIT", "HOME=/root"}
	for _, k := range config.Keys() {
		env = append(env, config.EnvVar(k)+"=1")
	}
	if got := config.CheckEnv(env); got != nil {
		t.Errorf("CheckEnv = %+v, want none", got)
	}
}

// TestCheckEnvOncePerVariable: one warning per variable even if it is set
// twice, sorted by name, and never the value (it may be a secret).
func TestCheckEnvOncePerVariable(t *testing.T) {
	got := config.CheckEnv([]string{"DRAINKIT_ZZZ=1", "DRAINKIT_ADMIN_TOKNE=s3cret", "DRAINKIT_ZZZ=2", "DRAINKIT_PROPAGATION_MIN=1s"})
	if len(got) != 2 || got[0].Var != "DRAINKIT_ADMIN_TOKNE" || got[0].Suggestion != "DRAINKIT_ADMIN_TOKEN" || got[1].Var != "DRAINKIT_ZZZ" {
		t.Fatalf("CheckEnv = %+v", got)
	}
	for _, w := range got {
		if strings.Contains(w.String(), "s3cret") {
			t.Errorf("warning shows the value: %s", w)
		}
	}
}

// TestLoadRecordsWarnings: Load does not fail on a typo, leaves the setting
// at its default and records the warning; a clean environment records none.
func TestLoadRecordsWarnings(t *testing.T) {
	c, err := config.Load(config.Sources{Env: []string{"DRAINKIT_PROPAGATION_MNI=6s", "DRAINKIT_DRAIN_TIMEOUT=7s"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Timings.PropagationMin; got != config.Default().Timings.PropagationMin {
		t.Errorf("propagation.min = %v, want the default", got)
	}
	w := c.Warnings()
	if len(w) != 1 || w[0] != (config.Warning{Var: "DRAINKIT_PROPAGATION_MNI", Suggestion: "DRAINKIT_PROPAGATION_MIN"}) {
		t.Fatalf("Warnings = %+v", w)
	}
	w[0].Var = "changed"
	if c.Warnings()[0].Var != "DRAINKIT_PROPAGATION_MNI" {
		t.Error("Warnings returns the Config's own slice")
	}
	c, err = config.Load(config.Sources{Env: []string{"DRAINKIT_DRAIN_TIMEOUT=7s", "DRAINKIT_CONSUL_BIN=/x"}})
	if err != nil || c.Warnings() != nil || config.Default().Warnings() != nil {
		t.Errorf("warnings without an unknown variable: %v %v", c.Warnings(), err)
	}
}
