package etcd_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/etcd"
	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// watcher runs etcd.Watch in the background and hands its views over a
// channel; fn may be wrapped to hold the watch.
type watcher struct {
	views  chan registry.View
	cancel context.CancelFunc
	done   chan error
}

func startWatch(t *testing.T, c *clientv3.Client, service string, opts etcd.WatchOptions, hold func(registry.View)) *watcher {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{views: make(chan registry.View, 64), cancel: cancel, done: make(chan error, 1)}
	go func() {
		w.done <- etcd.Watch(ctx, c, service, opts, func(v registry.View) {
			w.views <- v
			if hold != nil {
				hold(v)
			}
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-w.done; !errors.Is(err, context.Canceled) {
			t.Errorf("Watch returned %v, want context.Canceled", err)
		}
	})
	return w
}

func (w *watcher) next(t *testing.T) registry.View {
	t.Helper()
	select {
	case v := <-w.views:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("no view within 10s")
		return registry.View{}
	}
}

func put(t *testing.T, c *clientv3.Client, key, value string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Put(ctx, key, value)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

func del(t *testing.T, c *clientv3.Client, key string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Delete(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}

const (
	valueA = `{"id":"a","name":"w-svc","version":"v1","metadata":{"drainkit_ready_at":"2026-12-01T06:00:00Z"},"endpoints":["grpc://10.0.0.1:9000","http://10.0.0.1:8000?isSecure=false"]}`
	valueB = `{"id":"b","name":"w-svc","version":"","metadata":null,"endpoints":["http://[::1]:8001"]}`
)

// TestWatchViews: the first view is the Get at a revision; later views follow
// events, stamped with their revision; unparsable values, other services'
// values and, with Scheme http, instances without an http endpoint are left
// out; rewriting an unchanged value delivers nothing. Without a Scheme every
// instance is delivered at its first endpoint.
func TestWatchViews(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	dir := etcd.ServicePrefix(etcd.DefaultPrefix, "w-svc")
	put(t, c, dir+"a", valueA)
	put(t, c, dir+"junk", "not json")
	put(t, c, dir+"other", `{"id":"o","name":"other","endpoints":["http://10.0.0.9:1"]}`)
	put(t, c, dir+"grpc-only", `{"id":"g","name":"w-svc","endpoints":["grpc://10.0.0.2:9000"]}`)
	rev := put(t, c, etcd.ServicePrefix(etcd.DefaultPrefix, "w-svc-2")+"x", valueB) // a neighbour's prefix

	all := startWatch(t, c, "w-svc", etcd.WatchOptions{}, nil).next(t)
	if len(all.Instances) != 2 || all.Instances[0].HostPort() != "10.0.0.1:9000" || all.Instances[1].HostPort() != "10.0.0.2:9000" {
		t.Fatalf("first view without a Scheme: %+v, want a and the gRPC-only g, each at its first endpoint", all.Instances)
	}
	w := startWatch(t, c, "w-svc", etcd.WatchOptions{Scheme: "http"}, nil)
	v := w.next(t)
	if v.Err != nil || v.Source != "etcd" || v.Service != "w-svc" || v.Revision != uint64(rev) || v.Received.IsZero() ||
		len(v.Instances) != 1 || v.Instances[0].HostPort() != "10.0.0.1:8000" {
		t.Fatalf("first view %+v (revision want %d)", v, rev)
	}
	if at, ok := v.Instances[0].ReadyAt(); !ok || !at.Equal(time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)) {
		t.Fatalf("ready_at %v %v", at, ok)
	}
	put(t, c, dir+"a", valueA) // unchanged instance: no view
	rev = put(t, c, dir+"b", valueB)
	v = w.next(t)
	if v.Revision != uint64(rev) || !v.Has("a") || !v.Has("b") || v.Instances[1].HostPort() != "[::1]:8001" {
		t.Fatalf("view after adding b: %+v (revision want %d)", v, rev)
	}
	rev = del(t, c, dir+"a")
	v = w.next(t)
	if v.Revision != uint64(rev) || v.Has("a") || !v.Has("b") {
		t.Fatalf("view after deleting a: %+v (revision want %d)", v, rev)
	}
	select {
	case v := <-w.views:
		t.Fatalf("unexpected view %+v", v)
	default:
	}
}

// TestWatchAcrossCompaction: the watch starts after the first view was
// delivered; while it is held, the instance is deleted and the history
// compacted past the deletion. The watch gets ErrCompacted, reads again and
// delivers a view without the instance: no missed deletion.
func TestWatchAcrossCompaction(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	dir := etcd.ServicePrefix(etcd.DefaultPrefix, "w-svc")
	put(t, c, dir+"a", valueA)
	put(t, c, dir+"b", valueB)
	release := make(chan struct{})
	first := true
	w := startWatch(t, c, "w-svc", etcd.WatchOptions{}, func(registry.View) {
		if first {
			first = false
			<-release // hold the watch before it starts watching from R+1
		}
	})
	v := w.next(t)
	if !v.Has("a") || !v.Has("b") {
		t.Fatalf("first view %+v", v)
	}
	delRev := del(t, c, dir+"a")
	last := put(t, c, "/unrelated", "x")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Compact(ctx, last); err != nil {
		t.Fatal(err)
	}
	close(release)
	v = w.next(t)
	if v.Err != nil || v.Has("a") || !v.Has("b") || v.Revision < uint64(delRev) {
		t.Fatalf("view after the compaction: %+v; want b only, at revision >= %d", v, delRev)
	}
	t.Logf("deletion at revision %d, compacted at %d, view at revision %d", delRev, last, v.Revision)
}

// TestWatchErrorKeepsLastGood: etcd stopped before the watch is set up
// (the first view is held meanwhile), and again while the watch is quiet:
// each time the watch delivers the last good view with Err set, and once
// etcd is back a view without error.
func TestWatchErrorKeepsLastGood(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	dir := etcd.ServicePrefix(etcd.DefaultPrefix, "w-svc")
	rev := put(t, c, dir+"a", valueA)
	release := make(chan struct{})
	first := true
	w := startWatch(t, c, "w-svc", etcd.WatchOptions{CheckInterval: 300 * time.Millisecond, MaxBackoff: 500 * time.Millisecond},
		func(registry.View) {
			if first {
				first = false
				<-release
			}
		})
	good := w.next(t)
	for phase, stop := range []func(){
		func() { s.Stop(); close(release) }, // the watch is created on a stopped etcd
		s.Stop,                              // the watch is established and quiet
	} {
		stop()
		v := w.next(t)
		if v.Err == nil || v.ErrAt.IsZero() || !v.Has("a") || v.Revision != uint64(rev) || !v.Received.Equal(good.Received) {
			t.Fatalf("phase %d: view with etcd down: %+v; want the last good view with Err", phase, v)
		}
		t.Logf("phase %d: error view: %v", phase, v.Err)
		if !strings.Contains(v.Err.Error(), s.Endpoint) {
			t.Fatalf("phase %d: the error %q does not name the endpoint %s", phase, v.Err, s.Endpoint)
		}
		s.Restart(t)
		if good = w.next(t); good.Err != nil || !good.Has("a") {
			t.Fatalf("phase %d: view after etcd came back: %+v", phase, good)
		}
	}
}

// TestWatchArguments: unusable arguments fail at once.
func TestWatchArguments(t *testing.T) {
	if err := etcd.Watch(context.Background(), nil, "x", etcd.WatchOptions{}, func(registry.View) {}); err == nil {
		t.Fatal("nil client accepted")
	}
	var src registry.Source = etcd.NewSource(nil, "", etcd.WatchOptions{})
	if err := src.Watch(context.Background(), func(registry.View) {}); err == nil {
		t.Fatal("nil client accepted by the Source")
	}
}

// TestWatchNewEpochWhenRevisionGoesBack (issue 18 item 5): etcd is replaced
// by a member without the old data at the same endpoint (as after a restore
// from an older snapshot), so the store revision starts again far below the
// last one seen. The views that follow carry the lower revisions and Epoch
// 1, so that a consumer ordering by (Epoch, Revision) takes them; a
// deletion at a revision still below the old one is delivered too.
func TestWatchNewEpochWhenRevisionGoesBack(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	dir := etcd.ServicePrefix(etcd.DefaultPrefix, "w-svc")
	for range 30 { // raise the revision well above a fresh member's
		put(t, c, dir+"a", valueA)
	}
	old := put(t, c, dir+"b", valueB)
	w := startWatch(t, c, "w-svc", etcd.WatchOptions{MinBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, CheckInterval: time.Second}, nil)
	if v := w.next(t); v.Epoch != 0 || v.Revision != uint64(old) || len(v.Instances) != 2 {
		t.Fatalf("first view %+v", v)
	}
	s.RestartWiped(t)
	put(t, c, dir+"a", valueA)
	put(t, c, dir+"b", valueB)
	gone := del(t, c, dir+"a")
	if gone >= old {
		t.Fatalf("revision after the restart %d is not below %d: the test did not exercise a revision going back", gone, old)
	}
	for {
		v := w.next(t)
		if v.Err != nil {
			if v.Epoch != 0 || v.Revision != uint64(old) {
				t.Fatalf("error view %+v does not carry the last good view's epoch 0 and revision %d", v, old)
			}
			continue
		}
		if v.Epoch != 1 || v.Revision >= uint64(old) {
			t.Fatalf("view after the restart %+v: want epoch 1 and a revision below %d", v, old)
		}
		if !v.Has("a") && v.Has("b") {
			break // the deletion arrived
		}
	}
}
