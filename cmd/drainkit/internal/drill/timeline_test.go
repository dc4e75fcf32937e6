package drill

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/lifecycle/lifecycletest"
)

// TestTimelineFromRealLifecycle drains a real lifecycle with late arrivals and
// checks that the JSON exit log line and GET /state's timeline parse to the
// same report.
func TestTimelineFromRealLifecycle(t *testing.T) {
	var logs testlog.Buffer
	tm := budget.DefaultTimings()
	tm.PropagationMin, tm.PropagationQuiet, tm.PropagationMax = 100*time.Millisecond, 50*time.Millisecond, time.Second
	// SIGUSR2 only, which nothing sends: the test binary's SIGTERM and SIGINT
	// stay alone.
	lc, err := lifecycle.New(lifecycle.Options{Timings: tm, Signals: []os.Signal{syscall.SIGUSR2}, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	srv := lifecycletest.NewServer()
	lc.AddServer("api", srv)
	done := make(chan error, 1)
	go func() { done <- lc.Run(context.Background()) }()
	deadline := time.Now().Add(5 * time.Second)
	for lc.State() != lifecycle.Ready {
		if time.Now().After(deadline) {
			t.Fatal("never READY")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	<-srv.Serving() // Serve has its ServerHooks, which Begin reports to
	for range 3 {
		srv.Begin()() // a late arrival
	}
	status, err := json.Marshal(lc.Status())
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	fromState, ok := parseStateTimeline(status)
	if !ok {
		t.Fatalf("no timeline in %s", status)
	}
	if fromState.LateArrivals != 3 || fromState.T0.IsZero() {
		t.Fatalf("state timeline: %+v", fromState)
	}
	var fromLog ReplicaTimeline
	var t0 time.Time
	found, foundT0 := false, false
	for _, line := range strings.Split(logs.String(), "\n") {
		if tl, ok := parseLogTimeline([]byte(line)); ok {
			fromLog, found = tl, true
		}
		if at, ok := parseDrainingLine([]byte(line)); ok {
			t0, foundT0 = at, true
		}
	}
	if !found || !foundT0 {
		t.Fatalf("no timeline (%v) or DRAINING line (%v) in the log:\n%s", found, foundT0, logs.String())
	}
	// The log carries whole milliseconds (DESIGN.md section 7), GET /state
	// nanoseconds.
	if fromLog.LateArrivals != 3 || fromState.LastLateArrival <= 0 ||
		fromLog.LastLateArrival != fromState.LastLateArrival.Truncate(time.Millisecond) {
		t.Fatalf("log timeline: %+v; state: %+v", fromLog, fromState)
	}
	if !fromLog.T0.Equal(fromState.T0) {
		t.Fatalf("t0: log %v, state %v", fromLog.T0, fromState.T0)
	}
	if d := t0.Sub(fromLog.T0); d < -time.Second || d > time.Second {
		t.Fatalf("DRAINING line at %v, timeline start %v", t0, fromLog.T0)
	}
	for _, step := range []string{lifecycle.StepNotReady, lifecycle.StepWindowEnded, lifecycle.StepListenersClosed, lifecycle.StepStopHooksDone} {
		if _, ok := fromLog.Steps[step]; !ok {
			t.Errorf("log timeline lacks step %s: %v", step, fromLog.Steps)
		}
	}
	if w := fromLog.Steps[lifecycle.StepWindowEnded]; w < tm.PropagationMin {
		t.Errorf("window ended at %v, before propagation.min %v", w, tm.PropagationMin)
	}
}

func TestParseTimelineRejectsOtherLines(t *testing.T) {
	for _, line := range []string{``, `not json`, `{"msg":"hello"}`, `{"timeline":"text"}`} {
		if _, ok := parseLogTimeline([]byte(line)); ok {
			t.Errorf("parseLogTimeline(%q) ok", line)
		}
		if _, ok := parseStateTimeline([]byte(line)); ok {
			t.Errorf("parseStateTimeline(%q) ok", line)
		}
	}
	tl, ok := parseLogTimeline([]byte(`{"timeline":{"late_arrivals":2,"last_late_arrival_ms":7,"deregistered_ms":1000,"deregistered_error":"agent down","not_ready_ms":5}}`))
	if !ok || tl.StepErrors["deregistered"] != "agent down" || tl.Steps["deregistered"] != time.Second || tl.Steps["not_ready"] != 5*time.Millisecond ||
		tl.LateArrivals != 2 || tl.LastLateArrival != 7*time.Millisecond || len(tl.Steps) != 2 {
		t.Fatalf("failed step: %+v", tl)
	}
}

// TestParseStateTimelineReadsLifecycleTimeline: the GET /state form is
// lifecycle.Timeline's own JSON, whatever fields it grows.
func TestParseStateTimelineReadsLifecycleTimeline(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tl := lifecycle.Timeline{
		Start: start, Reason: "signal",
		Steps: []lifecycle.Step{
			{Name: lifecycle.StepNotReady},
			{Name: lifecycle.StepDeregistered, Offset: 3 * time.Millisecond, Err: "agent unreachable"},
			{Name: lifecycle.StepListenersClosed, Offset: 5 * time.Second},
		},
		LateArrivals: 7, LastLateArrival: 4 * time.Second,
		InFlightAtClose: lifecycle.InFlight{Requests: 2, Streams: 1}, ForceClosed: 1,
	}
	body, err := json.Marshal(map[string]any{"state": "DRAINING", "timeline": tl})
	if err != nil {
		t.Fatal(err)
	}
	rt, ok := parseStateTimeline(body)
	if !ok || !rt.T0.Equal(start) || rt.Steps[lifecycle.StepListenersClosed] != 5*time.Second ||
		rt.StepErrors[lifecycle.StepDeregistered] != "agent unreachable" || rt.LateArrivals != 7 ||
		rt.LastLateArrival != 4*time.Second || rt.InFlightAtClose != 3 || rt.ForceClosed != 1 {
		t.Fatalf("parsed %+v from %s", rt, body)
	}
}
