package main

import (
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"
)

// A caller still due when a 192 s window was cut (need 200 s) gets the
// ceiling proposed, not 4 times the need (800 s, then 3,200 s after the
// next cut), and is told to drain again with it; one still due when a
// window at the ceiling was cut does not follow the registry: check says
// to fix the caller rather than widen the window.
func TestCheckFromDrainsCappedAdvice(t *testing.T) {
	for _, c := range []struct {
		maxMS, needMS int64
		want          string
	}{
		{192000, 200000, "drain again with it"},
		{300000, 304000, "it does not follow the registry"},
	} {
		t.Run(time.Duration(c.maxMS*int64(time.Millisecond)).String(), func(t *testing.T) {
			checkCappedAdvice(t, c.maxMS, c.needMS, c.want)
		})
	}
}

func checkCappedAdvice(t *testing.T, maxMS, needMS int64, verdict string) {
	t.Helper()
	dir := t.TempDir()
	var e budget.WindowEvidence
	cut := budget.DrainEvidence{At: time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC), WindowMS: maxMS, CutAtMax: true, MaxMS: maxMS,
		Classes: map[string]budget.ClassEvidence{"pinned-1": {StalenessMS: needMS - 500, NeedMS: needMS}}}
	if err := e.Record(dir, cut); err != nil {
		t.Fatal(err)
	}
	r := drainkit(t, 20*time.Second, nil, "check", "--from-drains", dir)
	m := proposal.FindStringSubmatch(r.stdout)
	if r.code != 1 || m == nil {
		t.Fatalf("check --from-drains: exit %d, want 1 with a proposal:\n%s%s", r.code, r.stdout, r.stderr)
	}
	if want := max(budget.AdviceCeiling, time.Duration(needMS)*time.Millisecond).String(); m[1] != want {
		t.Errorf("proposed propagation.max %s, want %s:\n%s", m[1], want, r.stdout)
	}
	for _, want := range []string{"pinned-1", "fix the caller", "evidence verdict: FAIL", verdict} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("check --from-drains output lacks %q:\n%s", want, r.stdout)
		}
	}
}
