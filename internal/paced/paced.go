// Package paced is a test helper: a caller that sends a request at a fixed
// pace until a deadline and records what was answered and what failed, for
// the propagation window's tests of slow and fast consumers (issue 32).
package paced

import (
	"net/http"
	"sync"
	"testing"
	"time"
)

// Caller sends a request every Every until the stop time given to Run.
// Answered holds when each answered request returned, Failed the errors of
// the others. Read them once Run has returned.
type Caller struct {
	Every    time.Duration
	Answered []time.Time
	Failed   []error
}

// Run calls send on each tick of a ticker of c.Every until a tick comes
// after stop.
func (c *Caller) Run(stop time.Time, send func() error) {
	tick := time.NewTicker(c.Every)
	defer tick.Stop()
	for now := range tick.C {
		if now.After(stop) {
			return
		}
		if err := send(); err != nil {
			c.Failed = append(c.Failed, err)
		} else {
			c.Answered = append(c.Answered, time.Now())
		}
	}
}

// Last returns when the last answered request returned (the zero Time if
// none was).
func (c *Caller) Last() time.Time {
	if len(c.Answered) == 0 {
		return time.Time{}
	}
	return c.Answered[len(c.Answered)-1]
}

// MaxGap is the longest gap between two answered requests before t.
func (c *Caller) MaxGap(before time.Time) time.Duration {
	var g time.Duration
	for i := 1; i < len(c.Answered) && c.Answered[i].Before(before); i++ {
		g = max(g, c.Answered[i].Sub(c.Answered[i-1]))
	}
	return g
}

// The schedule of SlowAndFast: both callers send for Before, then the drain
// starts; the fast caller goes on for FastAfter, the slow one for SlowAfter.
const (
	SlowEvery = 400 * time.Millisecond
	FastEvery = 5 * time.Millisecond
	Before    = 2 * time.Second
	FastAfter = time.Second
	SlowAfter = 3 * time.Second
)

// SlowAndFast runs issue 32's two consumers: a slow caller (slow, every
// SlowEvery) and a fast one (fast, every FastEvery) send for Before; then
// drain is called (it starts the drain and returns); the fast caller stops
// FastAfter later, the slow one SlowAfter later. It returns once both have
// stopped.
func SlowAndFast(slow, fast func() error, drain func()) (slowCaller, fastCaller *Caller) {
	slowCaller, fastCaller = &Caller{Every: SlowEvery}, &Caller{Every: FastEvery}
	drainAt := time.Now().Add(Before)
	var callers sync.WaitGroup
	callers.Go(func() { slowCaller.Run(drainAt.Add(SlowAfter), slow) })
	callers.Go(func() { fastCaller.Run(drainAt.Add(FastAfter), fast) })
	time.Sleep(time.Until(drainAt))
	drain()
	callers.Wait()
	return slowCaller, fastCaller
}

// CheckWindow fails t unless the propagation window (from t0 to end, with
// max its propagation.max) served the slow and the fast caller of
// SlowAndFast as issue 32 asks: none of their requests failed, the window
// ended at least two of the slow caller's gaps after its last answered
// request (it was still due until then), and before max (both had moved).
// It logs the figures measured.
func CheckWindow(t testing.TB, slow, fast *Caller, t0, end time.Time, max time.Duration) {
	t.Helper()
	if len(slow.Failed) > 0 {
		t.Fatalf("%d of the slow caller's %d requests failed (first: %v): the window ended while it was still due",
			len(slow.Failed), len(slow.Failed)+len(slow.Answered), slow.Failed[0])
	}
	if len(fast.Failed) > 0 {
		t.Fatalf("%d of the fast caller's requests failed (first: %v)", len(fast.Failed), fast.Failed[0])
	}
	lastSlow := slow.Last()
	t.Logf("slow caller: %d requests, largest gap before the drain %v, last %v after t0; fast: %d; "+
		"window ended %v after t0, %v after the slow caller's last",
		len(slow.Answered), slow.MaxGap(t0), lastSlow.Sub(t0), len(fast.Answered), end.Sub(t0), end.Sub(lastSlow))
	if end.Sub(lastSlow) < 2*slow.Every {
		t.Errorf("window ended %v after the slow caller's last request, less than two of its %v gaps", end.Sub(lastSlow), slow.Every)
	}
	if end.Sub(t0) >= max {
		t.Errorf("window ran to propagation.max (%v) although both callers had moved", end.Sub(t0))
	}
}

// HTTPGet returns a send function for Run: a GET of url with User-Agent
// agent (the caller's identity) on a client of its own, whose idle
// connections t's cleanup closes. A status is not checked: any answer
// counts.
func HTTPGet(t testing.TB, url, agent string) func() error {
	return HTTPGetWith(t, url, "User-Agent", agent)
}

// HTTPGetWith is HTTPGet with the request header key set to value instead
// of the User-Agent (Go's default User-Agent then goes with it).
func HTTPGetWith(t testing.TB, url, key, value string) func() error {
	c := &http.Client{Transport: &http.Transport{}, Timeout: 5 * time.Second}
	t.Cleanup(c.CloseIdleConnections)
	return func() error {
		req, err := http.NewRequest("GET", url, nil)
		if err != nil {
			return err
		}
		req.Header.Set(key, value)
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
}
