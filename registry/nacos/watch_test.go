package nacos_test

import (
	"context"
	"testing"
	"time"

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
			NoSubscribe: noSub, SDKLogDir: t.TempDir()}
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
	opts := nacos.WatchOptions{Server: nacos.Server{Addrs: []string{srv.Addr}}, ReadInterval: 300 * time.Millisecond, SDKLogDir: t.TempDir()}
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
