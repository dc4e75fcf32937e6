package probes

import (
	"sync/atomic"
	"testing"
	"time"
)

// pollUntil polls cond every 5ms until it holds or the deadline passes.
func pollUntil(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestWatchdogFailsWhenTheProbeBlocks(t *testing.T) {
	var stalled atomic.Bool
	block, unblocked := make(chan struct{}), make(chan struct{})
	var ticks atomic.Int64
	w := newWatchdog(10*time.Millisecond, 150*time.Millisecond, func() {
		ticks.Add(1)
		if stalled.Load() {
			<-block // a deadlocked lifecycle: Status never returns
			close(unblocked)
		}
	})
	defer w.close()

	pollUntil(t, 5*time.Second, "ticking", func() bool { return ticks.Load() >= 3 })
	if ok, age := w.healthy(); !ok {
		t.Fatalf("healthy = false (age %s) while ticking", age)
	}
	stalled.Store(true)
	stalledAt := time.Now()
	pollUntil(t, 5*time.Second, "liveness fails after the threshold", func() bool { ok, _ := w.healthy(); return !ok })
	if took := time.Since(stalledAt); took < 150*time.Millisecond-20*time.Millisecond {
		t.Errorf("liveness failed %s after the stall, before the 150ms threshold", took)
	}
	stalled.Store(false)
	close(block)
	<-unblocked
	pollUntil(t, 5*time.Second, "liveness recovers with the ticks", func() bool { ok, _ := w.healthy(); return ok })
}
