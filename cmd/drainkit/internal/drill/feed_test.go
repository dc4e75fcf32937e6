package drill

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainkit/drainkit/registry"
)

// TestProbeDiscoveryWatchDeliversViews: the readiness-probe discovery
// delivers registry views a drainkit consumer can be fed from: the ready
// instances with their address, a growing revision, the receipt time and
// the ready time in the metadata; an empty list once readiness fails.
func TestProbeDiscoveryWatchDeliversViews(t *testing.T) {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	d := NewProbeDiscovery(30*time.Millisecond, 1, client)
	defer d.Close()
	var ready atomic.Bool
	ready.Store(true)
	r := fakeReplica(t, 7, &ready)
	r.HTTPAddr = "127.0.0.1:20007"
	d.Add(r)

	views := make(chan registry.View, 16)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- d.Watch(ctx, func(v registry.View) { views <- v }) }()
	v := <-views
	if len(v.Instances) != 1 || v.Source != "readiness-probes" || v.Revision == 0 || v.Received.IsZero() {
		t.Fatalf("first view %+v", v)
	}
	in := v.Instances[0]
	if in.ID != "r7" || in.HostPort() != "127.0.0.1:20007" {
		t.Fatalf("instance %+v", in)
	}
	if at, ok := in.ReadyAt(); !ok || time.Since(at) > 5*time.Second {
		t.Fatalf("ready time %v %v", at, ok)
	}
	ready.Store(false)
	select {
	case v2 := <-views:
		if len(v2.Instances) != 0 || v2.Instances == nil || v2.Revision <= v.Revision {
			t.Fatalf("view after readiness failed: %+v (previous revision %d)", v2, v.Revision)
		}
	case <-ctx.Done():
		t.Fatal("no view after readiness failed")
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Watch returned %v, want context.Canceled", err)
	}
}

// TestCachedViewsHoldsUntilTTL: behind a consumer cache, a watching consumer
// gets the first view at once and a changed one only at the next refresh.
func TestCachedViewsHoldsUntilTTL(t *testing.T) {
	f := newViewFeed("svc", "test")
	set := func(rev uint64) {
		f.mu.Lock()
		f.setLocked(registry.View{Service: "svc", Revision: rev, Received: time.Now(), Instances: []registry.Instance{}}, nil)
		f.mu.Unlock()
	}
	set(1)
	const ttl = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	type got struct {
		rev uint64
		at  time.Time
	}
	views := make(chan got, 16)
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- cachedViews(f, ttl, 0).Watch(ctx, func(v registry.View) { views <- got{v.Revision, time.Now()} })
	}()
	if g := <-views; g.rev != 1 {
		t.Fatalf("first view revision %d", g.rev)
	}
	set(2)
	g := <-views
	if g.rev != 2 || g.at.Sub(start) < ttl {
		t.Fatalf("revision %d delivered %v after the start: want 2, not before the TTL %v", g.rev, g.at.Sub(start), ttl)
	}
	cancel()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Watch returned %v", err)
	}
}

// TestWriteTrackerTellsWrittenFromNeverSent: a request written in full to a
// server that closes without answering counts as written and unanswered; a
// refused dial and an answered request do not.
func TestWriteTrackerTellsWrittenFromNeverSent(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			_, _ = c.Read(buf) // the whole small request
			_ = c.Close()      // and no answer
		}
	}()
	dead := ln.Addr().String()
	answering := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer answering.Close()
	refusing, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := refusing.Addr().String()
	_ = refusing.Close()

	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, DialContext: drillDialer}}
	defer client.CloseIdleConnections()
	for _, tc := range []struct {
		addr string
		want string
	}{
		{dead, dead},
		{strings.TrimPrefix(answering.URL, "http://"), ""},
		{refused, ""},
	} {
		var w writeTracker
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, _ = send(w.trace(ctx), client, "http://"+tc.addr, Request{Method: "POST", Path: "/", Body: postBody})
		cancel()
		if got := w.unanswered(); got != tc.want {
			t.Errorf("POST to %s: unanswered %q, want %q", tc.addr, got, tc.want)
		}
	}
}

// WaitListed's timeout says what discovery last answered: nothing, an error
// (an unreachable registry), or a list without the replica.
func TestWaitListedSaysWhatDiscoveryAnswered(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    *registry.View
		want string
	}{
		{"never answered", nil, "replica 1 never listed by discovery (etcd watch): it never answered (is the registry reachable?)"},
		{"error", &registry.View{Service: "svc", Err: errors.New("dial tcp 127.0.0.1:1: connection refused"), ErrAt: time.Now()},
			"its last answer was an error: dial tcp 127.0.0.1:1: connection refused (is the registry reachable?)"},
		{"listed others", &registry.View{Service: "svc", Received: time.Now(), Instances: []registry.Instance{{ID: "x"}}},
			"its last answer listed 1 instance(s)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newViewFeed("svc", "etcd watch")
			if tc.v != nil {
				f.mu.Lock()
				v := *tc.v
				v.Source = "etcd watch"
				f.setLocked(v, nil)
				f.mu.Unlock()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			err := f.WaitListed(ctx, 1)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("WaitListed = %v; want it to contain %q and wrap the deadline", err, tc.want)
			}
		})
	}
}
