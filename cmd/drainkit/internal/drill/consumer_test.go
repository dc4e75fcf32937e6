package drill

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestLoadIsPacedAndOpenLoop sends 100 requests/s to a server whose every
// request takes 150 ms: a closed loop of 2 consumers would have at most 2
// in flight and fall further behind its schedule with every request; the
// paced open loop keeps about 15 in flight, each sent at its due time, 10 ms
// apart, over keep-alive connections. Nothing is judged against the wall
// clock: the run stops once it has sent enough to judge (state, not a
// deadline), a send's delay is judged against the scheduling delay a
// sibling goroutine measured meanwhile (a starved process delays both), and
// the connections against the most requests in flight at once.
func TestLoadIsPacedAndOpenLoop(t *testing.T) {
	var conns atomic.Int64
	s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(150 * time.Millisecond) // a slow service, not synchronisation
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	s.Start()
	defer s.Close()
	src := &staticSource{}
	eps := []Endpoint{{Replica: 1, Addr: strings.TrimPrefix(s.URL, "http://")}}
	src.v.Store(&eps)
	c1, c2 := newNaive(src), newNaive(src)
	defer c1.Close()
	defer c2.Close()
	// A safety net only: a working load stops long before (see done).
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var ended atomic.Int64 // offset from rec's start when ctx ended
	rec := NewRecorder(time.Now())
	stopEnded := context.AfterFunc(ctx, func() { ended.Store(int64(rec.Offset(time.Now()))) })
	defer stopEnded()
	f := &flight{enough: func(sent, peak int64) bool {
		// Enough to judge keep-alive: far more requests than were ever in
		// flight at once (without keep-alive each opens its own connection).
		return sent >= 100 && sent >= peak+50
	}, done: cancel}
	l := &Load{Rate: 100, Clients: []Client{f.wrap(c1), f.wrap(c2)}, Request: Request{Method: "GET", Path: "/"}, Timeout: 10 * time.Second, Recorder: rec}
	probe := startLagProbe()
	l.Run(ctx)
	starved := probe.stop()
	recs := rec.Records()
	if ctx.Err() != context.Canceled {
		t.Fatalf("%d requests sent, %d at most in flight in a minute: the load never got enough to judge", f.sent.Load(), f.peak.Load())
	}
	if n := len(recs); int64(n) != f.sent.Load() || n < 100 {
		t.Fatalf("%d records of %d requests sent, want 100 or more, all recorded", n, f.sent.Load())
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Start < recs[j].Start })
	perConsumer := map[int]int{}
	for i, r := range recs {
		if r.Outcome != OK {
			t.Fatalf("request %d: %s %s", i, r.Outcome, r.Err)
		}
		perConsumer[r.Consumer]++
		if i > 0 {
			if gap := r.Start - recs[i-1].Start; gap < 9*time.Millisecond || gap > 11*time.Millisecond {
				t.Fatalf("scheduled starts %v apart, want 10ms", gap)
			}
		}
		// Paced: never before its due time, and late by no more than the
		// process's measured scheduling delay allows (a closed loop falls
		// behind by 65 ms more with each request).
		if lag := r.Sent - r.Start; lag < 0 || lag > starved+100*time.Millisecond {
			t.Fatalf("request %d sent %v after its due time; the scheduling delay measured meanwhile was at most %v", i, lag, starved)
		}
		if r.Start > time.Duration(ended.Load()) {
			t.Fatalf("request %d due at %v, after the run ended at %v", i, r.Start, time.Duration(ended.Load()))
		}
		if r.End-r.Start < 150*time.Millisecond {
			t.Fatalf("request %d took %v, less than the handler's 150ms", i, r.End-r.Start)
		}
	}
	if d := perConsumer[1] - perConsumer[2]; d < -1 || d > 1 {
		t.Fatalf("consumers got %v requests: not shared evenly", perConsumer)
	}
	// Open loop: requests were sent while earlier ones were unanswered, far
	// more than the 2 consumers' one each of a closed loop.
	peak := f.peak.Load()
	if peak < 8 {
		t.Fatalf("at most %d requests in flight at once: the load waits for answers (closed loop)", peak)
	}
	// Keep-alive: a connection is opened only when no idle one is left, so
	// there are no more than were in flight at once (a few more for dials
	// the transport started and then did not need).
	if n := conns.Load(); n > peak+5 {
		t.Fatalf("%d connections for %d requests, at most %d in flight at once: keep-alive not used", n, len(recs), peak)
	}
}

// flight wraps a load's clients to count the requests sent and the most in
// flight at once, and calls done once enough says the run has sent enough.
type flight struct {
	sent, inFlight, peak atomic.Int64
	enough               func(sent, peak int64) bool
	done                 func()
}

func (f *flight) wrap(c Client) Client { return flightClient{c, f} }

type flightClient struct {
	Client
	f *flight
}

func (c flightClient) Do(ctx context.Context, r Request) Attempt {
	f := c.f
	n := f.inFlight.Add(1)
	for {
		if p := f.peak.Load(); n <= p || f.peak.CompareAndSwap(p, n) {
			break
		}
	}
	if f.enough(f.sent.Add(1), f.peak.Load()) {
		f.done()
	}
	defer f.inFlight.Add(-1)
	return c.Client.Do(ctx, r)
}

// lagProbe measures how late a goroutine woken by a timer runs, as the
// load's scheduler is: the process's scheduling delay on this machine now.
type lagProbe struct {
	quit chan struct{}
	max  chan time.Duration
}

func startLagProbe() *lagProbe {
	p := &lagProbe{quit: make(chan struct{}), max: make(chan time.Duration, 1)}
	go func() {
		var most time.Duration
		tick := time.NewTimer(time.Millisecond)
		defer tick.Stop()
		for {
			due := time.Now().Add(time.Millisecond)
			tick.Reset(time.Millisecond)
			select {
			case <-p.quit:
				p.max <- most
				return
			case <-tick.C:
				most = max(most, time.Since(due))
			}
		}
	}()
	return p
}

// stop ends the probe and returns the largest delay it measured.
func (p *lagProbe) stop() time.Duration {
	close(p.quit)
	return <-p.max
}

func TestLoadRecordsNoEndpoint(t *testing.T) {
	src := &staticSource{}
	var none []Endpoint
	src.v.Store(&none)
	c := newNaive(src)
	defer c.Close()
	rec := NewRecorder(time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Stopped after 20 requests, not at a deadline a starved run could
	// reach before its first request.
	f := &flight{enough: func(sent, _ int64) bool { return sent >= 20 }, done: cancel}
	l := &Load{Rate: 200, Clients: []Client{f.wrap(c)}, Request: Request{Method: "GET", Path: "/"}, Timeout: time.Second, Recorder: rec}
	l.Run(ctx)
	n, failed := rec.Counts()
	if n < 20 || failed != n {
		t.Fatalf("%d requests, %d failed: want 20 or more, all failed", n, failed)
	}
	if r := rec.Records()[0]; r.Outcome != NoEndpoint || r.Replica != 0 {
		t.Fatalf("record %+v", r)
	}
}
