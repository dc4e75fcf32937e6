package drill

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeReplica is an admin listener whose /readyz answers 200 or 503 on
// demand; only the addresses of a Replica matter to discovery.
func fakeReplica(t *testing.T, id int, ready *atomic.Bool) *Replica {
	t.Helper()
	return fakeReplicaCounting(t, id, ready, new(atomic.Int64))
}

// fakeReplicaCounting is fakeReplica counting the 503 answers in failed.
func fakeReplicaCounting(t *testing.T, id int, ready *atomic.Bool, failed *atomic.Int64) *Replica {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/readyz" && ready.Load() {
			return
		}
		failed.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(s.Close)
	return &Replica{ID: id, HTTPAddr: "127.0.0.1:1", AdminAddr: strings.TrimPrefix(s.URL, "http://")}
}

func listed(d Source, id int) bool {
	return slices.ContainsFunc(d.Endpoints(), func(e Endpoint) bool { return e.Replica == id })
}

func TestProbeDiscoveryListsAndDropsAfterThreshold(t *testing.T) {
	const interval = 40 * time.Millisecond
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	d := NewProbeDiscovery(interval, 2, client)
	defer d.Close()
	var ready1, ready2 atomic.Bool
	ready1.Store(true)
	var failed1 atomic.Int64
	r1, r2 := fakeReplicaCounting(t, 1, &ready1, &failed1), fakeReplica(t, 2, &ready2)
	d.Add(r1)
	d.Add(r2)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.WaitListed(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if listed(d, 2) {
		t.Fatal("a replica that never answered 200 is listed")
	}
	ready2.Store(true)
	if err := d.WaitListed(ctx, 2); err != nil {
		t.Fatal(err)
	}

	// Readiness fails: the replica stays listed through one failed probe and
	// is dropped at the second.
	ready1.Store(false)
	for listed(d, 1) {
		if ctx.Err() != nil {
			t.Fatal("never dropped")
		}
		time.Sleep(2 * time.Millisecond) // poll interval, bounded by ctx
	}
	if n := failed1.Load(); n < 2 {
		t.Fatalf("dropped after %d failed probe(s), want the failure threshold 2", n)
	}
	if !listed(d, 2) {
		t.Fatal("the ready replica was dropped too")
	}
	if eps := d.Endpoints(); len(eps) != 1 || eps[0].Addr != r2.HTTPAddr {
		t.Fatalf("endpoints %v", eps)
	}
}

func TestWaitListedHonoursContext(t *testing.T) {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	d := NewProbeDiscovery(20*time.Millisecond, 2, client)
	defer d.Close()
	var never atomic.Bool
	d.Add(fakeReplica(t, 7, &never))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := d.WaitListed(ctx, 7); err == nil || !strings.Contains(err.Error(), "replica 7") {
		t.Fatalf("err = %v", err)
	}
}

// staticSource is a Source whose view the test changes.
type staticSource struct{ v atomic.Pointer[[]Endpoint] }

func (s *staticSource) Endpoints() []Endpoint { return *s.v.Load() }

func TestCachedSourceServesStaleUntilTTL(t *testing.T) {
	src := &staticSource{}
	a := []Endpoint{{Replica: 1, Addr: "a"}}
	b := []Endpoint{{Replica: 2, Addr: "b"}}
	src.v.Store(&a)
	now := time.Unix(1000, 0)
	c := NewCachedSource(src, 3*time.Second, 0)
	c.now = func() time.Time { return now }
	c.fetched = now
	src.v.Store(&b)
	now = now.Add(2999 * time.Millisecond)
	if got := c.Endpoints(); got[0].Replica != 1 {
		t.Fatalf("refreshed before the TTL: %v", got)
	}
	now = now.Add(time.Millisecond)
	if got := c.Endpoints(); got[0].Replica != 2 {
		t.Fatalf("not refreshed at the TTL: %v", got)
	}
}

func TestCachedSourcePhaseStaggersFirstRefresh(t *testing.T) {
	src := &staticSource{}
	a := []Endpoint{{Replica: 1}}
	src.v.Store(&a)
	// Judged against the clock read around the call, not after a margin a
	// starved process could overrun.
	before := time.Now()
	c := NewCachedSource(src, 10*time.Second, 0.5)
	after := time.Now()
	if c.fetched.Before(before.Add(-5*time.Second)) || c.fetched.After(after.Add(-5*time.Second)) {
		t.Fatalf("phase 0.5 of 10s: cache fetched %v before the call, want 5s", before.Sub(c.fetched))
	}
}

// TestCachedSourcePeekDoesNotRefresh: looking at what a consumer would use
// next must not move its refresh (the drill peeks while the load runs).
func TestCachedSourcePeekDoesNotRefresh(t *testing.T) {
	src := &staticSource{}
	a := []Endpoint{{Replica: 1, Addr: "a"}}
	b := []Endpoint{{Replica: 2, Addr: "b"}}
	src.v.Store(&a)
	now := time.Unix(1000, 0)
	c := NewCachedSource(src, 3*time.Second, 0)
	c.now = func() time.Time { return now }
	c.fetched = now
	src.v.Store(&b)
	if got := c.Peek(); len(got) != 1 || got[0].Replica != 1 {
		t.Fatalf("fresh cache: Peek %v, want the cached list", got)
	}
	now = now.Add(3 * time.Second)
	if got := c.Peek(); len(got) != 1 || got[0].Replica != 2 {
		t.Fatalf("expired cache: Peek %v, want what the next request will fetch", got)
	}
	if !c.fetched.Equal(time.Unix(1000, 0)) || c.view[0].Replica != 1 {
		t.Fatalf("Peek refreshed the cache: fetched %v, view %v", c.fetched, c.view)
	}
	if got := newNaive(c).Listed(); len(got) != 1 || got[0] != "b" {
		t.Fatalf("naive consumer's Listed %v, want what its next request will fetch", got)
	}
}
