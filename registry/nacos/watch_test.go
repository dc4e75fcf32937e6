package nacos_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/nacos"
)

// TestWatch: the first view is the full snapshot; an ejected (unhealthy)
// instance and an operator's offline (disabled) one leave the view; the
// weight is in Meta; the last instance's deregistration delivers an empty
// view (not the SDK's kept old list); a stopped subscription still sees
// changes through the periodic read.
func TestWatch(t *testing.T) {
	const svc = "watch-svc"
	a := newRegistrar(t, withWeight(testOptions(t, svc, 18101), 2))
	b := newRegistrar(t, testOptions(t, svc, 18102))
	sync(t, a, lifecycle.Ready, lifecycle.CauseChecks)
	sync(t, b, lifecycle.Ready, lifecycle.CauseChecks)
	waitList(t, consumerList, svc, 18102, "b listed", func(_ instance, ok bool) bool { return ok })
	waitList(t, consumerList, svc, 18101, "a listed", func(_ instance, ok bool) bool { return ok })

	for _, noSub := range []bool{false, true} {
		views := make(chan registry.View, 64)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		opts := nacos.WatchOptions{Server: nacos.Server{Addrs: []string{srv.Addr}}, ReadInterval: 300 * time.Millisecond,
			NoSubscribe: noSub, SDKDir: t.TempDir()}
		go func() { done <- nacos.Watch(ctx, svc, opts, func(v registry.View) { views <- v }) }()
		first := next(t, views)
		if len(first.Instances) != 2 || first.Source != "nacos" || first.Revision == 0 || first.Err != nil {
			t.Fatalf("first view (subscribe off: %v): %+v", noSub, first)
		}
		for _, in := range first.Instances {
			want := "1"
			if in.Port == 18101 {
				want = "2"
			}
			if in.Meta[nacos.MetaWeight] != want {
				t.Fatalf("weight of %d: %q, want %s", in.Port, in.Meta[nacos.MetaWeight], want)
			}
			if _, ok := in.ReadyAt(); !ok {
				t.Fatalf("no READY time in %+v", in)
			}
		}
		cancel()
		if err := <-done; err != context.Canceled {
			t.Fatalf("Watch returned %v", err)
		}
	}

	views := make(chan registry.View, 64)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	opts := nacos.WatchOptions{Server: nacos.Server{Addrs: []string{srv.Addr}}, ReadInterval: 300 * time.Millisecond, SDKDir: t.TempDir()}
	go func() { done <- nacos.Watch(ctx, svc, opts, func(v registry.View) { views <- v }) }()
	defer func() { cancel(); <-done }()
	if v := next(t, views); len(v.Instances) != 2 {
		t.Fatalf("first view %+v", v)
	}
	sync(t, a, lifecycle.Ejected, lifecycle.CauseChecks)
	if v := next(t, views); len(v.Instances) != 1 || v.Instances[0].Port != 18102 {
		t.Fatalf("after a's eject: %+v", v)
	}
	setEnabled(t, svc, 18102, false) // b offline by an operator
	if v := next(t, views); len(v.Instances) != 0 || v.Err != nil {
		t.Fatalf("after b's offline: %+v, want an empty view", v)
	}
	setEnabled(t, svc, 18102, true)
	if v := next(t, views); len(v.Instances) != 1 {
		t.Fatalf("after b's online: %+v", v)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer dcancel()
	if err := b.Deregister(dctx); err != nil {
		t.Fatal(err)
	}
	if v := next(t, views); len(v.Instances) != 0 || v.Instances == nil || v.Err != nil {
		t.Fatalf("after the last deregistration: %+v, want an empty (non-nil) view", v)
	}
}

func withWeight(o nacos.Options, w float64) nacos.Options { o.Weight = w; return o }

// next returns the next view, failing after 10s.
func next(t *testing.T, views <-chan registry.View) registry.View {
	t.Helper()
	select {
	case v := <-views:
		return v
	case <-time.After(10 * time.Second):
		t.Fatal("no view within 10s")
	}
	return registry.View{}
}

// TestSourceFullRead: consumer.Watcher's periodic full read is a second
// Watch of the Source beside the first. Here the first sees nothing after
// its first view (no subscription, an hour between reads), so only the full
// reads can find that an instance left: they must, and the Watcher applies
// them. A full read stops at its first view without making an SDK client
// (each one leaves goroutines behind in nacos-sdk-go v2.3.5).
func TestSourceFullRead(t *testing.T) {
	const svc = "fullread-svc"
	a := newRegistrar(t, testOptions(t, svc, 18111))
	b := newRegistrar(t, testOptions(t, svc, 18112))
	sync(t, a, lifecycle.Ready, lifecycle.CauseChecks)
	sync(t, b, lifecycle.Ready, lifecycle.CauseChecks)
	waitList(t, consumerList, svc, 18111, "a listed", func(_ instance, ok bool) bool { return ok })
	waitList(t, consumerList, svc, 18112, "b listed", func(_ instance, ok bool) bool { return ok })

	clientsBefore := nacos.SDKClientsMade()
	src := nacos.NewSource(svc, nacos.WatchOptions{Server: nacos.Server{Addrs: []string{srv.Addr}},
		ReadInterval: time.Hour, NoSubscribe: true, SDKDir: t.TempDir()})
	w, err := consumer.NewWatcher(consumer.WatcherOptions{Service: svc, Source: src, FullReadInterval: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(w.View().Instances); n != 2 {
		t.Fatalf("first view: %d instances, want 2", n)
	}
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer dcancel()
	if err := a.Deregister(dctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the full read removes a", func() (bool, string) {
		v, st := w.View(), w.Status()
		return len(v.Instances) == 1 && v.Instances[0].Port == 18112 && st.FullReadRepairs > 0, fmt.Sprintf("%+v; %+v", v.Instances, st)
	})

	// With a subscription too: the full reads answer beside a subscribed
	// watch, and none makes a client of its own.
	src = nacos.NewSource(svc, nacos.WatchOptions{Server: nacos.Server{Addrs: []string{srv.Addr}}, SDKDir: t.TempDir()})
	w2, err := consumer.NewWatcher(consumer.WatcherOptions{Service: svc, Source: src, FullReadInterval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	eventually(t, 10*time.Second, "5 full reads", func() (bool, string) {
		st := w2.Status()
		return st.FullReads >= 5, fmt.Sprintf("%+v", st)
	})
	w2.Close()
	if made := nacos.SDKClientsMade() - clientsBefore; made != 1 {
		t.Fatalf("%d nacos-sdk-go clients made by two watches and their full reads, want 1 (the subscribed watch's): a full read made one", made)
	}
}
