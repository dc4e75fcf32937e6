package main

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// During DRAINING: /readyz 503, /livez 200, /startupz 200 throughout, sampled
// every 50 ms across the propagation window's end and the listeners' close.
// An illegal transition over HTTP (POST /restore while draining) is a 409.
func TestProbesThroughoutDraining(t *testing.T) {
	c := startChild(t, []string{"DRAINKIT_PROPAGATION_MIN=700ms", "DRAINKIT_PROPAGATION_QUIET=0s", "DRAINKIT_PROPAGATION_MAX=700ms"})
	c.WaitState("READY")
	res := getWork(c, "2500ms") // keeps the drain going after the window
	c.WaitFor(5*time.Second, "the request in flight", func() bool {
		_, body := c.AdminDo("GET", "/state", nil)
		return strings.Contains(body, `"requests": 1`)
	})

	c.Signal(syscall.SIGTERM)
	c.WaitFor(2*time.Second, "DRAINING", func() bool { return c.State() == "DRAINING" })
	begin := time.Now()
	samples := 0
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for time.Since(begin) < 1500*time.Millisecond {
		for path, want := range map[string]int{"/readyz": 503, "/livez": 200, "/startupz": 200} {
			if got := c.Probe(path); got != want {
				t.Errorf("%s at %s into the drain = %d, want %d", path, time.Since(begin).Round(time.Millisecond), got, want)
			}
		}
		samples++
		<-tick.C
	}
	t.Logf("%d samples of 3 probes over 1.5s of DRAINING", samples)
	if samples < 10 {
		t.Errorf("only %d samples in 1.5s", samples)
	}
	if st := c.State(); st != "DRAINING" {
		t.Fatalf("state %q after sampling, want DRAINING: the samples did not cover the drain", st)
	}
	// The window ended and the listeners closed during the sampling.
	_, body := c.AdminDo("GET", "/state", nil)
	if !strings.Contains(body, `"window_ended"`) || !strings.Contains(body, `"listeners_closed"`) {
		t.Errorf("timeline lacks window_ended or listeners_closed: %s", body)
	}

	code, body := c.AdminDo("POST", "/restore", nil)
	if code != http.StatusConflict || !strings.Contains(body, "DRAINING -> READY") {
		t.Errorf("POST /restore while draining = %d %q, want 409 naming DRAINING -> READY", code, body)
	}

	if r := <-res; r.err != nil || r.code != 200 {
		t.Errorf("request in flight: %d %v", r.code, r.err)
	}
	if code := c.WaitExit(10 * time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}

// POST /drain?wait=propagation with a 1 s window answers 200 after about 1 s;
// a SIGTERM 100 ms later does not add a second window: the process exits
// about one window after the POST, with one DRAINING transition. A request
// in flight past the window keeps the process draining when the SIGTERM
// arrives.
func TestPreStopDrainThenSIGTERM(t *testing.T) {
	const window = time.Second
	c := startChild(t, []string{"DRAINKIT_PROPAGATION_MIN=1s", "DRAINKIT_PROPAGATION_QUIET=0s", "DRAINKIT_PROPAGATION_MAX=1s"})
	c.WaitState("READY")
	res := getWork(c, "1300ms")
	c.WaitFor(5*time.Second, "the request in flight", func() bool {
		_, body := c.AdminDo("GET", "/state", nil)
		return strings.Contains(body, `"requests": 1`)
	})

	start := time.Now()
	code, body := c.AdminDo("POST", "/drain?wait=propagation", nil)
	answered := time.Since(start)
	if code != http.StatusOK {
		t.Fatalf("POST /drain?wait=propagation = %d %q, want 200", code, body)
	}
	if answered < window-50*time.Millisecond || answered > window+700*time.Millisecond {
		t.Errorf("answered after %s, want about %s", answered, window)
	}

	<-time.After(100 * time.Millisecond) // the scenario: the kubelet sends SIGTERM after the preStop hook
	select {
	case <-c.Exited():
		t.Fatalf("exited before the SIGTERM, with a request in flight:\n%s", c.Logs())
	default:
	}
	sigAt := time.Now()
	c.Signal(syscall.SIGTERM)
	if r := <-res; r.err != nil || r.code != http.StatusOK {
		t.Errorf("request in flight: %d %v", r.code, r.err)
	}
	if code := c.WaitExit(10 * time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	// A window started by the SIGTERM could not end before sigAt + window.
	if c.ExitAt().After(sigAt.Add(window)) {
		t.Errorf("exited %s after the SIGTERM (%s after the POST): a second window ran", c.ExitAt().Sub(sigAt), c.ExitAt().Sub(start))
	}
	if n := c.TransitionsTo("DRAINING"); n != 1 {
		t.Errorf("%d transitions to DRAINING, want 1", n)
	}
	t.Logf("POST answered after %s; SIGTERM at %s; exit at %s (from the POST)", answered.Round(time.Millisecond),
		sigAt.Sub(start).Round(time.Millisecond), c.ExitAt().Sub(start).Round(time.Millisecond))
	done := c.LogLines("drainkit: drain complete")
	if len(done) != 1 {
		t.Fatalf("%d drain-complete lines", len(done))
	}
	tl, _ := done[0]["timeline"].(map[string]any)
	if ms, _ := tl["window_ended_ms"].(float64); time.Duration(ms)*time.Millisecond < window-50*time.Millisecond || time.Duration(ms)*time.Millisecond > window+500*time.Millisecond {
		t.Errorf("window_ended at %vms, want about %s (timeline %v)", ms, window, tl)
	}
	if reason, _ := tl["reason"].(string); !strings.HasPrefix(reason, "POST /drain from 127.0.0.1") {
		t.Errorf("drain reason %q, want the POST's", reason)
	}
	assertCleanupRan(t, c)
}
