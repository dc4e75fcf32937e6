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
	base := time.Now()
	var lastGood atomic.Int64 // end of the last probe that did not block, ns after base
	w := newWatchdog(10*time.Millisecond, 150*time.Millisecond, func() {
		ticks.Add(1)
		if stalled.Load() {
			<-block // a deadlocked lifecycle: Status never returns
			close(unblocked)
			return
		}
		lastGood.Store(int64(time.Since(base)))
	})
	defer w.close()

	// Healthy while ticking: awaited with the ticks, since a tick that a
	// loaded machine runs more than the threshold late is rightly a failed
	// liveness, not a watchdog that fails while ticking.
	pollUntil(t, 5*time.Second, "healthy while ticking", func() bool {
		ok, _ := w.healthy()
		return ticks.Load() >= 3 && ok
	})
	stalled.Store(true)
	pollUntil(t, 5*time.Second, "liveness fails after the threshold", func() bool { ok, _ := w.healthy(); return !ok })
	// The threshold runs from the last tick that completed, which may be a
	// little before the stall began when the ticking goroutine was scheduled
	// late: the clock starts there, not at stalled.Store.
	if took := time.Since(base) - time.Duration(lastGood.Load()); took < 150*time.Millisecond-20*time.Millisecond {
		t.Errorf("liveness failed %s after the last completed tick, before the 150ms threshold", took)
	}
	stalled.Store(false)
	close(block)
	<-unblocked
	pollUntil(t, 5*time.Second, "liveness recovers with the ticks", func() bool { ok, _ := w.healthy(); return ok })
}
