package lifecycle

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/lifecycle/budget"
)

// drainWithSlowCaller runs one drain of a Lifecycle with o, during which a
// caller identified as identity sends every 400 ms, for 2 s before the
// drain and `after` after it, on synctest's clock; it returns the Lifecycle.
func drainWithSlowCaller(t *testing.T, o Options, identity string, after time.Duration) *Lifecycle {
	t.Helper()
	l := newTest(t, o)
	l.AddServer("http", newFakeServer(&recorder{}, "http"))
	res := runAsync(l)
	waitState(t, l, Ready)
	drainAt := time.Now().Add(2*time.Second + time.Millisecond)
	var callers sync.WaitGroup
	callers.Go(func() { sendEvery(l, caller("10.0.0.1", identity), 400*time.Millisecond, drainAt.Add(after)) })
	time.Sleep(time.Until(drainAt))
	_ = l.Drain("test")
	if err := waitResult(t, res, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	callers.Wait()
	return l
}

// Issue 32, the learned window: a drain records each caller class's
// staleness under propagation.evidence_dir; the next Lifecycle on that
// directory advises the window that would have covered it (log, Status),
// never less than was measured.
func TestEvidenceAdvisesWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		tm := fastTimings(0, 100*time.Millisecond, 10*time.Second)
		drainWithSlowCaller(t, Options{Timings: tm, Signals: []os.Signal{}, EvidenceDir: dir}, "spring-cloud", 3*time.Second)
		e, err := budget.ReadWindowEvidence(dir)
		if err != nil || len(e.Drains) != 1 {
			t.Fatalf("evidence %+v, %v: want one drain", e, err)
		}
		// The last request 2799 ms after t0 (the tick at 4800 ms), due 3
		// gaps (1200 ms) after it.
		got := e.Drains[0].Classes["spring-cloud"]
		if got.StalenessMS != 2799 || got.NeedMS != 3999 || e.Drains[0].CutAtMax {
			t.Fatalf("spring-cloud's evidence %+v (cut %v), want staleness 2799 ms, need 3999 ms", got, e.Drains[0].CutAtMax)
		}
		logger, logs := testlog.New(t, "lifecycle log")
		l := newTest(t, Options{Timings: tm, Signals: []os.Signal{}, EvidenceDir: dir, Logger: logger})
		a := l.Status().WindowAdvice
		want := budget.WindowAdvice{Drains: 1, Need: 3999 * time.Millisecond, PropagationMax: 5 * time.Second,
			GracePeriod: 8 * time.Second, TerminationGracePeriodSeconds: 13}
		if a == nil || *a != want {
			t.Fatalf("advice %+v, want %+v", a, want)
		}
		if !strings.Contains(logs.String(), "propagation_max_ms=5000") {
			t.Errorf("no advice logged at start:\n%s", logs)
		}
	})
}

// A drain cut at propagation.max with a caller still due records a lower
// bound: the advice says so, and still covers what was measured.
func TestEvidenceCutAtMaxIsALowerBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		tm := fastTimings(0, 100*time.Millisecond, 2*time.Second)
		l := drainWithSlowCaller(t, Options{Timings: tm, Signals: []os.Signal{}, EvidenceDir: dir}, "slow", 5*time.Second)
		a := l.Status().WindowAdvice
		if a == nil || !a.AtLeast || a.Need < tm.PropagationMax || a.PropagationMax <= tm.PropagationMax {
			t.Fatalf("advice %+v after a window cut at max %v: want a lower bound above it", a, tm.PropagationMax)
		}
	})
}

// A directory that cannot be written fails New, naming the key.
func TestEvidenceDirUnwritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := New(Options{Logger: discard(), EvidenceDir: filepath.Join(file, "evidence")})
	var re *budget.RangeError
	if !errors.As(err, &re) || re.Key != "propagation.evidence_dir" {
		t.Fatalf("New with an evidence_dir under a file: %v, want a RangeError naming propagation.evidence_dir", err)
	}
}
