package main

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A 2 s request in flight, SIGTERM at 0.5 s: the request completes with 200,
// the process exits only after it, main's deferred cleanup runs, exit code 0.
func TestInFlightRequestCompletesOnSIGTERM(t *testing.T) {
	c := startChild(t, noWindow)
	c.WaitState("READY")

	start := time.Now()
	res := getWork(c, "2s")
	c.WaitFor(5*time.Second, "the request in flight", func() bool {
		_, body := c.AdminDo("GET", "/state", nil)
		var s struct {
			InFlight struct{ Requests int } `json:"in_flight"`
		}
		return json.Unmarshal([]byte(body), &s) == nil && s.InFlight.Requests == 1
	})
	if time.Since(start) > 400*time.Millisecond {
		t.Logf("request took %s to arrive; SIGTERM is late", time.Since(start))
	}
	<-time.After(time.Until(start.Add(500 * time.Millisecond))) // the scenario's time, not synchronisation
	sigAt := time.Now()
	c.Signal(syscall.SIGTERM)

	// The drain has started while the request runs.
	c.WaitFor(time.Second, "readyz 503 after SIGTERM", func() bool { return c.Probe("/readyz") == http.StatusServiceUnavailable })
	select {
	case <-c.Exited():
		t.Fatalf("exited %s after SIGTERM, with the request in flight", c.ExitAt().Sub(sigAt))
	default:
	}

	r := <-res
	if r.err != nil || r.code != http.StatusOK || r.body != "worked 2s\n" {
		t.Fatalf("request: %d %q %v", r.code, r.body, r.err)
	}
	if took := r.at.Sub(start); took < 2*time.Second {
		t.Errorf("request answered after %s, want >= 2s", took)
	}
	if code := c.WaitExit(10 * time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if c.ExitAt().Before(start.Add(2 * time.Second)) {
		t.Errorf("exited %s after the request started, before it could complete", c.ExitAt().Sub(start))
	}
	if after := c.ExitAt().Sub(r.at); after > 3*time.Second {
		t.Errorf("exited %s after the request completed, want promptly", after)
	}
	t.Logf("SIGTERM at %s, request answered at %s, exit at %s (from the request's start)",
		sigAt.Sub(start).Round(time.Millisecond), r.at.Sub(start).Round(time.Millisecond), c.ExitAt().Sub(start).Round(time.Millisecond))
	assertCleanupRan(t, c)
}

// assertCleanupRan checks that main's cleanup stop hook logged its line
// once, inside the drain: before the drain-complete line, which is the last
// thing logged.
func assertCleanupRan(t *testing.T, c *child) {
	t.Helper()
	if len(c.LogLines("cleanup done")) != 1 {
		t.Fatalf("no \"cleanup done\" line from main's stop hook:\n%s", c.Logs())
	}
	if len(c.LogLines("drainkit: drain complete")) != 1 {
		t.Fatalf("no drain-complete line:\n%s", c.Logs())
	}
	lines := strings.Split(strings.TrimSpace(c.Logs()), "\n")
	cleanup := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, `"msg":"cleanup done"`) })
	if !strings.Contains(lines[len(lines)-1], `"msg":"drainkit: drain complete"`) || cleanup < 0 || cleanup > len(lines)-2 {
		t.Errorf("want the cleanup line, and the drain-complete line last:\n%s", c.Logs())
	}
}

// Warm-up of 10 s, SIGTERM at 100 ms: exit well before the warm-up would
// have ended (within 3 s: a loaded machine's process exit, not a deadline
// of the service), /readyz never 200, exit code 0.
func TestSIGTERMDuringWarmup(t *testing.T) {
	c := startChild(t, nil, "--warmup", "10s")

	type poll struct{ ok, unavailable, failed int }
	polled := make(chan poll, 1)
	warming := make(chan struct{}) // closed at the first 503: the admin listener serves, warm-up runs
	go func() {
		var p poll
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			switch c.Probe("/readyz") {
			case http.StatusOK:
				p.ok++
			case http.StatusServiceUnavailable:
				if p.unavailable == 0 {
					close(warming)
				}
				p.unavailable++
			default:
				p.failed++
			}
			select {
			case <-c.Exited():
				polled <- p
				return
			case <-tick.C:
			}
		}
	}()

	// Signal during warm-up, once the probes answer (a loaded machine may
	// take longer than the scenario's 100ms to open the admin listener).
	select {
	case <-warming:
	case <-time.After(5 * time.Second):
		t.Fatal("/readyz never answered 503 within 5s of start")
	}
	<-time.After(time.Until(c.StartedAt.Add(100 * time.Millisecond))) // the scenario's time
	sigAt := time.Now()
	c.Signal(syscall.SIGTERM)
	code := c.WaitExit(5 * time.Second)
	if took := c.ExitAt().Sub(sigAt); took > 3*time.Second {
		t.Errorf("exited %s after SIGTERM during a 10s warm-up, want within 3s: the signal did not abort it", took)
	}
	if code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	p := <-polled
	t.Logf("exit %s after SIGTERM during warm-up; readyz polls: %+v", c.ExitAt().Sub(sigAt).Round(time.Millisecond), p)
	if p.ok != 0 {
		t.Errorf("/readyz answered 200 %d times; the instance was never ready", p.ok)
	}
	if p.unavailable == 0 {
		t.Errorf("/readyz never answered 503 (%+v): the poll proved nothing", p)
	}
	if n := c.TransitionsTo("READY"); n != 0 {
		t.Errorf("%d transitions to READY", n)
	}
	assertCleanupRan(t, c)
}

// A 10 s propagation window; SIGTERM, then a second SIGTERM 200 ms later:
// exit well before the window would have ended (within 3 s of the second:
// a loaded machine's process exit, not the window), code 143.
func TestSecondSIGTERMForcesExit(t *testing.T) {
	c := startChild(t, []string{"DRAINKIT_PROPAGATION_MIN=10s", "DRAINKIT_PROPAGATION_QUIET=0s",
		"DRAINKIT_PROPAGATION_MAX=10s", "DRAINKIT_GRACE_PERIOD=30s"})
	c.WaitState("READY")
	first := time.Now()
	c.Signal(syscall.SIGTERM)
	c.WaitFor(2*time.Second, "DRAINING", func() bool { return c.State() == "DRAINING" })

	<-time.After(time.Until(first.Add(200 * time.Millisecond))) // the scenario's time
	second := time.Now()
	c.Signal(syscall.SIGTERM)
	code := c.WaitExit(5 * time.Second)
	if took := c.ExitAt().Sub(second); took > 3*time.Second {
		t.Errorf("exited %s after the second SIGTERM, want within 3s: it waited for the 10s window", took)
	}
	t.Logf("exit %s after the second SIGTERM, code %d", c.ExitAt().Sub(second).Round(time.Millisecond), code)
	if code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit code %d, want 143", code)
	}
	if len(c.LogLines("drainkit: second signal, forcing exit")) != 1 {
		t.Errorf("no forced-exit line:\n%s", c.Logs())
	}
}
