package app

import (
	"bufio"
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
)

// GET /events streams an event every 100 ms and, served by httpdrain, ends
// with "event: drain" as soon as the drain begins.
func TestEventsEndWithDrainEvent(t *testing.T) {
	lc, err := lifecycle.New(lifecycle.Options{Logger: slog.New(slog.DiscardHandler), Timings: budget.Timings{
		WarmupTimeout: time.Second, PropagationMin: 200 * time.Millisecond, PropagationMax: 200 * time.Millisecond,
		DrainTimeout: time.Second, StopTimeout: time.Second, GracePeriod: 5 * time.Second,
	}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lc.AddServer("http", httpdrain.New(&http.Server{Handler: Handler()}, ln))
	sub, unsubscribe := lc.Subscribe()
	defer unsubscribe()
	runErr := make(chan error, 1)
	go func() { runErr <- lc.Run(context.Background()) }()
	for lc.State() != lifecycle.Ready {
		select {
		case <-sub:
		case <-time.After(5 * time.Second):
			t.Fatal("not READY")
		}
	}

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	// The clock for the events' pace starts before the request: the handler's
	// ticker starts after it, so three events need at least two intervals
	// from here. Started after the response headers instead, a test
	// goroutine scheduled late on a loaded machine would count part of the
	// first interval as not elapsed and see the events "too fast".
	start := time.Now()
	resp, err := (&http.Client{Transport: tr}).Get("http://" + ln.Addr().String() + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	var lines []string
	readEvent := func() string { // returns the event's lines joined, "" at the end
		var ev []string
		for sc.Scan() {
			if sc.Text() == "" {
				return strings.Join(ev, "|")
			}
			ev = append(ev, sc.Text())
		}
		return ""
	}
	for i := 1; i <= 3; i++ {
		ev := readEvent()
		lines = append(lines, ev)
		if !strings.Contains(ev, "data: ") {
			t.Fatalf("event %d: %q", i, ev)
		}
	}
	if d := time.Since(start); d < 2*EventInterval {
		t.Fatalf("3 events in %s: faster than one per %s", d, EventInterval)
	}
	drainAt := time.Now()
	if err := lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	var last string
	for ev := readEvent(); ev != ""; ev = readEvent() {
		last = ev
	}
	if !strings.Contains(last, "event: drain") || !strings.HasPrefix(last, "retry: 1000|") {
		t.Fatalf("last event %q, want retry: 1000 and event: drain (events %q)", last, lines)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("stream: %v", err)
	}
	if d := time.Since(drainAt); d > 300*time.Millisecond { // issue 3: within 300 ms
		t.Fatalf("stream ended %s after the drain began", d)
	}
	select {
	case err := <-runErr:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
}
