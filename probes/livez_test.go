package probes_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/probes"
)

func TestLivezFailsWhenWatchdogStops(t *testing.T) {
	hs := newHarness(t, probes.Options{WatchdogInterval: 10 * time.Millisecond, WatchdogThreshold: 200 * time.Millisecond}, lifecycle.Options{})
	hs.run(t)
	// Ticking: healthy well past the threshold. The tick and /livez are
	// awaited together: a tick that a loaded machine runs more than the
	// threshold late rightly fails /livez for that moment.
	probes.PollUntil(t, 5*time.Second, "livez 200 while the watchdog ticks past the threshold", func() bool {
		return probes.WatchdogLastTick(hs.h) > 300*time.Millisecond && hs.code(t, "GET", "/livez") == ok
	})
	// Close stops the ticks; /livez must fail once the threshold passed.
	_ = hs.h.Close()
	probes.PollUntil(t, 5*time.Second, "livez 503 after the watchdog stopped", func() bool { return hs.code(t, "GET", "/livez") == bad })
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
	lc, err := lifecycle.New(lifecycle.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opts probes.Options
		key  string
	}{
		{probes.Options{WatchdogInterval: -time.Second}, "probes.watchdog_interval"},
		{probes.Options{WatchdogInterval: 2 * time.Minute}, "probes.watchdog_interval"},
		{probes.Options{WatchdogInterval: time.Second, WatchdogThreshold: 1500 * time.Millisecond}, "probes.watchdog_threshold"},
		{probes.Options{WatchdogThreshold: 2 * time.Hour}, "probes.watchdog_threshold"},
		{probes.Options{WatchdogInterval: 6 * time.Second}, "probes.watchdog_threshold"}, // default threshold 10s < 12s
	} {
		h, err := probes.New(lc, tc.opts)
		var re *budget.RangeError
		if !errors.As(err, &re) || re.Key != tc.key {
			t.Errorf("probes.New(%+v) = %v, want a RangeError for %s", tc.opts, err, tc.key)
		}
		if h != nil {
			_ = h.Close()
		}
	}
	// The bound itself is allowed: default threshold 10s = 2 * 5s.
	h, err := probes.New(lc, probes.Options{WatchdogInterval: 5 * time.Second})
	if err != nil {
		t.Fatalf("interval 5s with the default threshold: %v", err)
	}
	_ = h.Close()

	h, err = probes.New(lc, probes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if o := probes.OptionsInForce(h); o.WatchdogInterval != probes.DefaultWatchdogInterval || o.WatchdogThreshold != probes.DefaultWatchdogThreshold {
		t.Errorf("defaults %+v", o)
	}
	rec := serveFrom(h, "127.0.0.1:1", "GET", "/livez", nil)
	if rec.Code != http.StatusOK {
		t.Errorf("livez of a fresh handler = %d", rec.Code)
	}
}
