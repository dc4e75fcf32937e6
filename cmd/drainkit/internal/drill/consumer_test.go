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

// TestLoadIsPacedAndOpenLoop sends 100 requests/s for 1 s to a server whose
// every request takes 150 ms: a closed loop of 2 consumers would manage about
// 13; the paced open loop still sends about 100, 10 ms apart.
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
	rec := NewRecorder(time.Now())
	l := &Load{Rate: 100, Clients: []Client{c1, c2}, Request: Request{Method: "GET", Path: "/"}, Timeout: 2 * time.Second, Recorder: rec}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	l.Run(ctx)
	ran := time.Since(start)
	recs := rec.Records()
	// The run lasts until the context's timer fires, which a busy machine
	// delivers late: the pace is judged against how long it really ran.
	if n, most := len(recs), int(ran/(10*time.Millisecond))+2; n < 85 || n > most {
		t.Fatalf("%d requests in %v at 100/s, want 85 to %d", n, ran, most)
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
		if r.End-r.Start < 150*time.Millisecond {
			t.Fatalf("request %d took %v, less than the handler's 150ms", i, r.End-r.Start)
		}
	}
	if d := perConsumer[1] - perConsumer[2]; d < -1 || d > 1 {
		t.Fatalf("consumers got %v requests: not shared evenly", perConsumer)
	}
	// Keep-alive: about 15 requests are in flight at once, so connections
	// are reused rather than opened per request.
	if n := conns.Load(); n > 40 {
		t.Fatalf("%d connections for %d requests: keep-alive not used", n, len(recs))
	}
}

func TestLoadRecordsNoEndpoint(t *testing.T) {
	src := &staticSource{}
	var none []Endpoint
	src.v.Store(&none)
	c := newNaive(src)
	defer c.Close()
	rec := NewRecorder(time.Now())
	l := &Load{Rate: 200, Clients: []Client{c}, Request: Request{Method: "GET", Path: "/"}, Timeout: time.Second, Recorder: rec}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	l.Run(ctx)
	n, failed := rec.Counts()
	if n == 0 || failed != n {
		t.Fatalf("%d requests, %d failed: want all failed", n, failed)
	}
	if r := rec.Records()[0]; r.Outcome != NoEndpoint || r.Replica != 0 {
		t.Fatalf("record %+v", r)
	}
}
