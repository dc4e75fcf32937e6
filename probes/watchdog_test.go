package probes

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
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

func TestLivezFailsWhenWatchdogStops(t *testing.T) {
	hs := newHarness(t, Options{WatchdogInterval: 10 * time.Millisecond, WatchdogThreshold: 200 * time.Millisecond})
	hs.run(t)
	// Ticking: healthy well past the threshold.
	pollUntil(t, 5*time.Second, "a tick after the threshold", func() bool { return hs.h.wd.last.Load() > int64(300*time.Millisecond) })
	if c := hs.code(t, "GET", "/livez"); c != ok {
		t.Fatalf("livez = %d while the watchdog ticks", c)
	}
	// Close stops the ticks; /livez must fail once the threshold passed.
	_ = hs.h.Close()
	pollUntil(t, 5*time.Second, "livez 503 after the watchdog stopped", func() bool { return hs.code(t, "GET", "/livez") == bad })
	_, _, body := hs.do(t, "GET", "/livez?verbose", nil)
	if !strings.Contains(body, "[-]watchdog failed: last tick") || !strings.Contains(body, "threshold 200ms") {
		t.Errorf("livez body %q", body)
	}
	// Readiness does not depend on the watchdog.
	if c := hs.code(t, "GET", "/readyz"); c != ok {
		t.Errorf("readyz = %d, want 200", c)
	}
	_ = hs.h.Close() // idempotent
}

func TestOptionsValidation(t *testing.T) {
	lc, err := lifecycle.New(lifecycle.WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opts Options
		key  string
	}{
		{Options{WatchdogInterval: -time.Second}, "probes.watchdog_interval"},
		{Options{WatchdogInterval: 2 * time.Minute}, "probes.watchdog_interval"},
		{Options{WatchdogInterval: time.Second, WatchdogThreshold: 1500 * time.Millisecond}, "probes.watchdog_threshold"},
		{Options{WatchdogThreshold: 2 * time.Hour}, "probes.watchdog_threshold"},
		{Options{WatchdogInterval: 6 * time.Second}, "probes.watchdog_threshold"}, // default threshold 10s < 12s
	} {
		h, err := New(lc, tc.opts)
		var re *lifecycle.RangeError
		if !errors.As(err, &re) || re.Key != tc.key {
			t.Errorf("New(%+v) = %v, want a RangeError for %s", tc.opts, err, tc.key)
		}
		if h != nil {
			_ = h.Close()
		}
	}
	// The bound itself is allowed: default threshold 10s = 2 * 5s.
	h, err := New(lc, Options{WatchdogInterval: 5 * time.Second})
	if err != nil {
		t.Fatalf("interval 5s with the default threshold: %v", err)
	}
	_ = h.Close()

	h, err = New(lc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.opts.WatchdogInterval != DefaultWatchdogInterval || h.opts.WatchdogThreshold != DefaultWatchdogThreshold {
		t.Errorf("defaults %+v", h.opts)
	}
	rec := serveFrom(h, "127.0.0.1:1", "GET", "/livez", nil)
	if rec.Code != http.StatusOK {
		t.Errorf("livez of a fresh handler = %d", rec.Code)
	}
}
