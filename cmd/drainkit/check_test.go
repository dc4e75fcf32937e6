package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCheck(t *testing.T) {
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
		{"defaults fit 30s", nil, []string{"check", "--termination-grace-period", "30s"}, 0,
			[]string{"window", "min 5s, quiet 1s, max 15s", "drain", "8s", "stop", "3s", "margin", "grace", "30s", "verdict: OK", "1s to spare"}},
		{"pod grace too short", nil, []string{"check", "--termination-grace-period", "20s"}, 1,
			[]string{"verdict: FAIL", "grace_period 30s is longer than terminationGracePeriodSeconds 20s", "at least 30"}},
		{"file", nil, []string{"check", "--config", file, "--termination-grace-period", "40s"}, 0,
			[]string{"max 20s (file " + file + ")", "35s (file " + file + ")", "verdict: OK"}},
		{"env overflows the budget", []string{"DRAINKIT_PROPAGATION_MAX=25s"}, []string{"check"}, 1,
			[]string{"verdict: FAIL", "grace_period"}},
		{"bad value", []string{"DRAINKIT_PROPAGATION_MIN=banana"}, []string{"check"}, 2,
			[]string{"propagation.min", "banana", "DRAINKIT_PROPAGATION_MIN"}},
		{"bad flag", nil, []string{"check", "--termination-grace-period", "0s"}, 2,
			[]string{"--termination-grace-period"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := drainkit(t, 20*time.Second, tc.env, tc.args...)
			out := r.stdout + r.stderr
			if r.code != tc.code {
				t.Errorf("exit %d, want %d\n%s", r.code, tc.code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
		})
	}
}
