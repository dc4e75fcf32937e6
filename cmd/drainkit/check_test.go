package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
	parallelDrill(t, 0)
	dir := t.TempDir()
	file := filepath.Join(dir, "drainkit.yaml")
	if err := os.WriteFile(file, []byte("propagation:\n  max: 20s\ngrace_period: 35s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		code int
		want []string
	}{
		// The defaults fit Kubernetes' default terminationGracePeriodSeconds,
		// written as a duration or as the manifest's integer.
		{"defaults with 30s: OK", nil, []string{"check", "--termination-grace-period", "30s"}, 0,
			[]string{"window", "min 5s, quiet 1s, max 12s", "drain", "6s", "stop", "3s", "margin", "grace", "25s", "slack", "5s",
				"verdict: OK", "1.5s to spare", "leaves 5s beyond grace_period"}},
		{"defaults with 30: OK", nil, []string{"check", "--termination-grace-period", "30"}, 0,
			[]string{"verdict: OK", "leaves 5s beyond grace_period"}},
		{"defaults with no flag: OK", nil, []string{"check"}, 0, []string{"verdict: OK"}},
		// Fits, but with no room for the hook's exec and the exit.
		{"defaults with 28: WARN", nil, []string{"check", "--termination-grace-period", "28"}, 3,
			[]string{"verdict: WARN", "leaves only 3s beyond it", "at least 30"}},
		{"pod grace too short", nil, []string{"check", "--termination-grace-period", "20s"}, 1,
			[]string{"verdict: FAIL", "grace_period 25s is longer than terminationGracePeriodSeconds 20s", "at least 30"}},
		{"file", nil, []string{"check", "--config", file, "--termination-grace-period", "40s"}, 0,
			[]string{"max 20s (file " + file + ")", "35s (file " + file + ")", "verdict: OK"}},
		// grace_period shorter than its own budget: the service would refuse
		// to start; a FAIL verdict, as documented.
		{"env overflows the budget", []string{"DRAINKIT_PROPAGATION_MAX=25s"}, []string{"check"}, 1,
			[]string{"verdict: FAIL", "does not fit its own grace period", "grace_period", "propagation.max 25s from env DRAINKIT_PROPAGATION_MAX"}},
		{"grace_period below its budget", []string{"DRAINKIT_GRACE_PERIOD=20s"}, []string{"check"}, 1,
			[]string{"verdict: FAIL", "does not fit its own grace period", "DRAINKIT_GRACE_PERIOD"}},
		// grace_period itself invalid: a configuration that does not load.
		{"grace_period not a duration", []string{"DRAINKIT_GRACE_PERIOD=banana"}, []string{"check"}, 2,
			[]string{"grace_period", "banana"}},
		{"grace_period out of its own range", []string{"DRAINKIT_GRACE_PERIOD=25h"}, []string{"check"}, 2,
			[]string{"grace_period", "24h"}},
		{"bad value", []string{"DRAINKIT_PROPAGATION_MIN=banana"}, []string{"check"}, 2,
			[]string{"propagation.min", "banana", "DRAINKIT_PROPAGATION_MIN"}},
		{"bad flag", nil, []string{"check", "--termination-grace-period", "0s"}, 2,
			[]string{"--termination-grace-period"}},
		{"negative seconds", nil, []string{"check", "--termination-grace-period", "-5"}, 2,
			[]string{"--termination-grace-period", "out of range 1..86400"}},
		{"zero seconds", nil, []string{"check", "--termination-grace-period", "0"}, 2,
			[]string{"--termination-grace-period", "out of range 1..86400"}},
		{"duration too long", nil, []string{"check", "--termination-grace-period", "25h"}, 2,
			[]string{"--termination-grace-period", "25h0m0s is out of range: want > 0s and <= 24h0m0s"}},
		{"bad flag text", nil, []string{"check", "--termination-grace-period", "thirty"}, 2,
			[]string{"--termination-grace-period", "whole seconds"}},
		// A typo is warned about, and the setting it meant stays at its
		// default (here the 5s minimum above a 3s maximum: the typo is why
		// the configuration does not load).
		{"env typo", []string{"DRAINKIT_PROPAGATION_MNI=1s", "DRAINKIT_PROPAGATION_MAX=3s"}, []string{"check"}, 2,
			[]string{"check: warning: env DRAINKIT_PROPAGATION_MNI is not a drainkit setting and is ignored; did you mean DRAINKIT_PROPAGATION_MIN?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := drainkit(t, 20*time.Second, tc.env, tc.args...)
			out := r.stdout + r.stderr
			if r.code != tc.code {
				t.Errorf("exit %d, want %d\n%s", r.code, tc.code, out)
			}
			if tc.code == 2 && strings.Contains(out, "verdict:") {
				t.Errorf("a configuration that does not load got a verdict:\n%s", out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
