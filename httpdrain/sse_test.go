package httpdrain_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
)

// sseHandler streams an event every 20 ms; when the drain begins it sends
// "event: drain" and returns.
func sseHandler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	fl := http.NewResponseController(w)
	drain := httpdrain.Draining(r.Context())
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case <-drain:
			fmt.Fprint(w, "event: drain\ndata: bye\n\n")
			fl.Flush()
			return
		case <-r.Context().Done():
			return
		case <-tick.C:
			fmt.Fprintf(w, "data: %d\n\n", i)
			if err := fl.Flush(); err != nil {
				return
			}
		}
	}
}

// readEvents reads SSE events from url until the stream ends; it sends each
// event's type ("message" or the event: field) on the returned channel, which
// is closed at the end; the stream's error goes to errc.
func readEvents(t *testing.T, url string) (<-chan string, <-chan error) {
	events := make(chan string, 1024)
	errc := make(chan error, 1)
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(events)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		typ := "message"
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				typ = strings.TrimPrefix(line, "event: ")
			case line == "":
				events <- typ
				typ = "message"
			}
		}
		errc <- sc.Err()
	}()
	return events, errc
}

// An SSE stream open at drain start receives a final event and the drain
// finishes within 300 ms.
func TestSSEGetsFinalEventAndDrainIsPrompt(t *testing.T) {
	in := start(t, timings(0, time.Second), http.HandlerFunc(sseHandler), nil)
	events, errc := readEvents(t, in.url("/events"))
	for i := 0; i < 3; i++ { // the stream is live
		if typ := <-events; typ != "message" {
			t.Fatalf("event %q", typ)
		}
	}
	if got := in.hs.InFlight().Requests; got != 1 {
		t.Fatalf("in-flight requests %d, want 1", got)
	}
	t0 := time.Now()
	if err := in.lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	var last string
	for typ := range events {
		last = typ
	}
	if last != "drain" {
		t.Fatalf("last event %q, want drain", last)
	}
	if err := <-errc; err != nil {
		t.Fatalf("stream ended with %v, want a clean end", err)
	}
	if err := in.wait(5 * time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if d := in.endAt.Sub(t0); d > 300*time.Millisecond {
		t.Fatalf("drain took %s, want <= 300ms", d)
	}
	tl, _ := in.lc.Timeline()
	if tl.ForceClosed != 0 {
		t.Fatalf("force-closed %d", tl.ForceClosed)
	}
	t.Logf("drain took %s", in.endAt.Sub(t0))
}

// A handler that ignores the drain signal is cut at drain.timeout and counted
// as forced; Run exits with code 1.
func TestIgnoringHandlerIsCutAtDrainTimeout(t *testing.T) {
	const drainTimeout = time.Second
	started := make(chan struct{}, 1)
	ended := make(chan error, 1)
	in := start(t, timings(0, drainTimeout), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		started <- struct{}{}
		<-r.Context().Done() // ignores httpdrain.Draining
		ended <- r.Context().Err()
	}), nil)
	events, errc := readEvents(t, in.url("/stuck"))
	<-started
	if err := in.lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	err := in.wait(10 * time.Second)
	if code := exitCode(err); code != 1 {
		t.Fatalf("exit code %d (%v), want 1", code, err)
	}
	if !errors.Is(<-ended, context.Canceled) {
		t.Fatal("handler context not cancelled by the force-close")
	}
	for range events {
	}
	<-errc
	tl, _ := in.lc.Timeline()
	if tl.ForceClosed != 1 {
		t.Fatalf("force-closed %d, want 1", tl.ForceClosed)
	}
	closedAt, ok1 := tl.Offset(lifecycle.StepListenersClosed)
	forcedAt, ok2 := tl.Offset(lifecycle.StepForceClosed)
	if !ok1 || !ok2 {
		t.Fatalf("timeline steps missing: %+v", tl.Steps)
	}
	if d := forcedAt - closedAt; d < drainTimeout-200*time.Millisecond || d > drainTimeout+200*time.Millisecond {
		t.Fatalf("cut %s after the listeners closed, want %s +-200ms", d, drainTimeout)
	}
	if tl.InFlightAtClose.Requests != 1 {
		t.Fatalf("in flight at close %+v", tl.InFlightAtClose)
	}
}
