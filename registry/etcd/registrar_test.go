package etcd_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/etcd"
	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func syncTo(t *testing.T, r *etcd.Registrar, to lifecycle.State, cause lifecycle.Cause) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return r.Sync(ctx, lifecycle.Transition{To: to, Cause: cause, Reason: "test", At: time.Now()})
}

// TestLifecycleRegisterDrain: no key before READY; the key (kratos's JSON,
// endpoint, READY time) under a live lease once READY; at the drain the lease
// is revoked, the key is gone, a watch sees it go, and the timeline records
// deregistered and confirmed.
func TestLifecycleRegisterDrain(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	o, _ := testOptions(t, s, "lc-svc", 18080)
	r := newRegistrar(t, o)
	lc := newLifecycle(t, r)
	release := make(chan struct{})
	lc.OnWarmup("hold", func(context.Context) error { <-release; return nil })
	done := run(t, lc)

	for range 5 { // the warm-up is held: nothing may be registered
		if _, _, found, err := getKey(t, c, r.Key()); found || err != nil {
			t.Fatalf("key present (%v, %v) during the warm-up, state %s", found, err, lc.State())
		}
		time.Sleep(50 * time.Millisecond) // spacing the reads, not synchronisation
	}
	close(release)
	var v kratosValue
	var lease clientv3.LeaseID
	eventually(t, 5*time.Second, "key written after READY", func() (bool, string) {
		var found bool
		var err error
		v, lease, found, err = getKey(t, c, r.Key())
		if found && lc.State() != lifecycle.Ready {
			t.Fatalf("key written in state %s", lc.State())
		}
		return found, fmt.Sprint(err)
	})
	if r.Key() != "/microservices/lc-svc/"+r.ID() || v.ID != r.ID() || v.Name != "lc-svc" ||
		len(v.Endpoints) != 1 || v.Endpoints[0] != "http://127.0.0.1:18080" {
		t.Fatalf("key %s value %+v", r.Key(), v)
	}
	readyAt, err := time.Parse(time.RFC3339Nano, v.Metadata[registry.MetaReadyAt])
	if err != nil || time.Since(readyAt) < 0 || time.Since(readyAt) > 10*time.Second {
		t.Fatalf("ready_at %q: %v", v.Metadata[registry.MetaReadyAt], err)
	}
	if lease == 0 || lease != r.Lease() || leaseTTL(t, c, lease) <= 0 {
		t.Fatalf("key lease %x, registrar lease %x", int64(lease), int64(r.Lease()))
	}

	views := make(chan registry.View, 16)
	wctx, wcancel := context.WithCancel(context.Background())
	wdone := make(chan struct{})
	go func() {
		defer close(wdone)
		_ = etcd.Watch(wctx, c, "lc-svc", etcd.WatchOptions{}, func(v registry.View) { views <- v })
	}()
	defer func() { wcancel(); <-wdone }()
	if v := <-views; !v.Has(r.ID()) {
		t.Fatalf("first view %+v lacks the instance", v)
	}

	if err := lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	select {
	case v := <-views:
		if v.Err != nil || v.Has(r.ID()) {
			t.Fatalf("view after the drain: %+v", v)
		}
	case <-time.After(testTimings().PropagationMin + time.Second):
		t.Fatal("the watch did not see the deletion")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	done <- nil
	if _, _, found, _ := getKey(t, c, r.Key()); found || leaseTTL(t, c, lease) != -1 {
		t.Fatal("key or lease left after the drain")
	}
	tl, _ := lc.Timeline()
	dereg, ok1 := tl.Offset(lifecycle.StepDeregistered)
	conf, ok2 := tl.Offset(lifecycle.StepConfirmed)
	if !ok1 || !ok2 {
		t.Fatalf("timeline %v lacks deregistered or confirmed", tl)
	}
	t.Logf("deregistered at %s, confirmed at %s", dereg, conf)
}

// TestEjectKeepsLease: EJECTED deletes the key while the lease stays alive
// past its TTL; READY writes the key again under the same lease.
func TestEjectKeepsLease(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	o, _ := testOptions(t, s, "eject-svc", 18081)
	r := newRegistrar(t, o)
	if err := syncTo(t, r, lifecycle.Ready, lifecycle.CauseWarmup); err != nil {
		t.Fatal(err)
	}
	lease := r.Lease()
	first, l, found, err := getKey(t, c, r.Key())
	if !found || l != lease {
		t.Fatalf("after READY: found %v lease %x (%v)", found, int64(l), err)
	}
	if err := syncTo(t, r, lifecycle.Ejected, lifecycle.CauseChecks); err != nil {
		t.Fatal(err)
	}
	if _, _, found, _ := getKey(t, c, r.Key()); found || r.Status().Health != registry.Critical {
		t.Fatalf("after EJECTED: key found %v, health %s", found, r.Status().Health)
	}
	deadline := time.Now().Add(testTTL + time.Second)
	for time.Now().Before(deadline) {
		if ttl := leaseTTL(t, c, lease); ttl <= 0 {
			t.Fatalf("lease TTL %d while EJECTED: the lease was not kept alive", ttl)
		}
		time.Sleep(250 * time.Millisecond) // sampling the lease across its TTL
	}
	if err := syncTo(t, r, lifecycle.Ready, lifecycle.CauseChecks); err != nil {
		t.Fatal(err)
	}
	again, l, found, _ := getKey(t, c, r.Key())
	if !found || l != lease || r.Status().Registrations != 1 {
		t.Fatalf("after READY again: found %v, lease %x (want %x), status %+v", found, int64(l), int64(lease), r.Status())
	}
	// The value carries the latest READY time (registry.MetaReadyAt), so
	// consumers ramp the restored instance again.
	t1, err1 := time.Parse(time.RFC3339Nano, first.Metadata[registry.MetaReadyAt])
	t2, err2 := time.Parse(time.RFC3339Nano, again.Metadata[registry.MetaReadyAt])
	if err1 != nil || err2 != nil || !t2.After(t1) {
		t.Fatalf("ready_at %q after the first READY, %q after READY again: want a later time", first.Metadata[registry.MetaReadyAt], again.Metadata[registry.MetaReadyAt])
	}
}

// TestWipedRestartReregisters: etcd restarted with its data wiped while
// READY: the registrar grants a new lease and writes the key again within two
// keep-alive periods.
func TestWipedRestartReregisters(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	o, buf := testOptions(t, s, "wipe-svc", 18082)
	r := newRegistrar(t, o)
	if err := syncTo(t, r, lifecycle.Ready, lifecycle.CauseWarmup); err != nil {
		t.Fatal(err)
	}
	old := r.Lease()
	s.RestartWiped(t)
	// Registered again means both: the key is on etcd under the new lease,
	// and the registrar has recorded that write. The key becomes visible to
	// another client a moment before the registrar's own Txn response
	// arrives, so the two are awaited together, not one after the other.
	took := eventually(t, 10*time.Second, "registered again", func() (bool, string) {
		st := r.Status()
		_, l, found, err := getKey(t, c, r.Key())
		return found && l != old && l == r.Lease() && st.Registrations == 2 && st.Health == registry.Passing,
			fmt.Sprintf("key found %v (%v) under lease %x; status %+v", found, err, int64(l), st)
	})
	t.Logf("registered again %s after etcd came back with wiped data (keep-alive every %s)", took.Round(time.Millisecond), testKeepAlive)
	if limit := 2*testKeepAlive + 500*time.Millisecond; took > limit {
		t.Errorf("registered again after %s, later than two keep-alive periods (+500ms scheduling slack)", took)
	}
	if st := r.Status(); st.Registrations != 2 || st.Health != registry.Passing {
		t.Fatalf("status %+v", st)
	}
	if !strings.Contains(buf.String(), "the lease is gone") {
		t.Fatal("the lease loss was not logged")
	}
}

// TestWipedRestartWhileEjected: a lease lost while EJECTED is granted again
// without writing the key; READY then writes it under the new lease.
func TestWipedRestartWhileEjected(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	o, _ := testOptions(t, s, "wipe-ej-svc", 18087)
	r := newRegistrar(t, o)
	if err := syncTo(t, r, lifecycle.Ready, lifecycle.CauseWarmup); err != nil {
		t.Fatal(err)
	}
	if err := syncTo(t, r, lifecycle.Ejected, lifecycle.CauseOperator); err != nil {
		t.Fatal(err)
	}
	old := r.Lease()
	s.RestartWiped(t)
	// The new lease is recorded before the step records the health it
	// applied under it, so both are awaited together.
	eventually(t, 3*testKeepAlive, "a new lease while ejected", func() (bool, string) {
		l, h := r.Lease(), r.Status().Health
		return l != 0 && l != old && leaseTTL(t, c, l) > 0 && h == registry.Maintenance, fmt.Sprintf("lease %x, health %s", int64(l), h)
	})
	if _, _, found, _ := getKey(t, c, r.Key()); found || r.Status().Health != registry.Maintenance {
		t.Fatalf("while ejected: key found %v, health %s", found, r.Status().Health)
	}
	if err := syncTo(t, r, lifecycle.Ready, lifecycle.CauseOperator); err != nil {
		t.Fatal(err)
	}
	if _, l, found, _ := getKey(t, c, r.Key()); !found || l != r.Lease() || l == old {
		t.Fatalf("after READY: found %v under lease %x (old %x)", found, int64(l), int64(old))
	}
}

// TestNeverReregisterWhileDraining: after Deregister, Sync refuses and a
// wiped etcd is not written to again.
func TestNeverReregisterWhileDraining(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	o, _ := testOptions(t, s, "drain-svc", 18083)
	r := newRegistrar(t, o)
	if err := syncTo(t, r, lifecycle.Ready, lifecycle.CauseWarmup); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := r.Deregister(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Confirm(ctx); err != nil {
		t.Fatal(err)
	}
	if err := syncTo(t, r, lifecycle.Ready, lifecycle.CauseOperator); !errors.Is(err, registry.ErrDeregistered) {
		t.Fatalf("Sync after Deregister: %v", err)
	}
	s.RestartWiped(t)
	time.Sleep(2 * testKeepAlive) // two keep-alive periods in which nothing may be written
	if _, _, found, _ := getKey(t, c, r.Key()); found {
		t.Fatal("registered again while draining")
	}
}

// TestEtcdDownDeregisterBounded: with etcd stopped, Deregister gives up at its
// deadline with an error and Confirm at its own.
func TestEtcdDownDeregisterBounded(t *testing.T) {
	s := etcdtest.Start(t)
	o, buf := testOptions(t, s, "down-svc", 18084)
	r := newRegistrar(t, o)
	if err := syncTo(t, r, lifecycle.Ready, lifecycle.CauseWarmup); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := r.Deregister(ctx)
	took := time.Since(start)
	t.Logf("Deregister with etcd down: %s: %v", took.Round(time.Millisecond), err)
	if err == nil || took > 1500*time.Millisecond {
		t.Fatalf("Deregister returned %v after %s; want an error at the 1s deadline", err, took)
	}
	if !strings.Contains(buf.String(), "deregistration failed") {
		t.Fatal("the failure was not logged")
	}
	cctx, ccancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer ccancel()
	if err := r.Confirm(cctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Confirm with etcd down: %v", err)
	}
}

// TestEtcdNeverReachedNothingToConfirm: with etcd unreachable from the
// start, nothing was registered: Deregister and Confirm both return nil at
// once, rather than Confirm querying a dead etcd until the window ends.
func TestEtcdNeverReachedNothingToConfirm(t *testing.T) {
	s := etcdtest.Start(t)
	o, buf := testOptions(t, s, "never-svc", 18088)
	s.Stop() // before the first call: the registrar never reaches etcd
	o.CallTimeout = 200 * time.Millisecond
	r := newRegistrar(t, o)
	sctx, scancel := context.WithTimeout(context.Background(), time.Second)
	defer scancel()
	if err := r.Sync(sctx, lifecycle.Transition{To: lifecycle.Ready, Cause: lifecycle.CauseWarmup, At: time.Now()}); err == nil {
		t.Fatal("Sync succeeded with etcd stopped")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Deregister(ctx); err != nil {
		t.Fatalf("Deregister = %v, want nil: nothing was registered", err)
	}
	start := time.Now()
	err := r.Confirm(ctx)
	took := time.Since(start)
	if err != nil || took > time.Second {
		t.Fatalf("Confirm = %v after %s; want nil at once: no lease was ever held", err, took)
	}
	if !strings.Contains(buf.String(), "nothing to deregister") {
		t.Fatal("the empty deregistration was not logged")
	}
	// The failure names where it looked: etcd's client says only "context
	// deadline exceeded".
	if !strings.Contains(buf.String(), "endpoints="+s.Endpoint) {
		t.Fatalf("the failure log does not name the endpoints %s:\n%s", s.Endpoint, buf.String())
	}
}

// TestKeyBelongsToItsLease: a key held by another lease is neither
// overwritten nor deleted; once that lease is revoked the registrar
// registers. A predecessor's revocation never removes a successor's key.
func TestKeyBelongsToItsLease(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o, _ := testOptions(t, s, "held-svc", 18085)
	o.ID = "fixed-id"
	other, err := c.Grant(ctx, 30)
	if err != nil {
		t.Fatal(err)
	}
	key := etcd.Key(etcd.DefaultPrefix, "held-svc", "fixed-id")
	if _, err := c.Put(ctx, key, `{"id":"fixed-id","name":"held-svc"}`, clientv3.WithLease(other.ID)); err != nil {
		t.Fatal(err)
	}
	r := newRegistrar(t, o)
	if err := syncTo(t, r, lifecycle.Ready, lifecycle.CauseWarmup); !errors.Is(err, etcd.ErrKeyHeld) {
		t.Fatalf("Sync with the key held by another lease: %v", err)
	}
	if _, l, _, _ := getKey(t, c, key); l != other.ID {
		t.Fatalf("key moved to lease %x", int64(l))
	}
	if _, err := c.Revoke(ctx, other.ID); err != nil {
		t.Fatal(err)
	}
	eventually(t, 3*testKeepAlive, "registered once the other lease ended", func() (bool, string) {
		_, l, found, err := getKey(t, c, key)
		return found && l == r.Lease(), fmt.Sprint(found, err)
	})

	// Predecessor and successor on the same address and port.
	o1, _ := testOptions(t, s, "succ-svc", 18086)
	pred := newRegistrar(t, o1)
	succ := newRegistrar(t, o1)
	for _, x := range []*etcd.Registrar{pred, succ} {
		if err := syncTo(t, x, lifecycle.Ready, lifecycle.CauseWarmup); err != nil {
			t.Fatal(err)
		}
	}
	if err := pred.Deregister(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, found, _ := getKey(t, c, succ.Key()); !found || pred.Key() == succ.Key() {
		t.Fatal("the predecessor's deregistration removed the successor's key")
	}
}

// TestOptionsValidate: out-of-range options fail in New naming the key.
func TestOptionsValidate(t *testing.T) {
	base := etcd.DefaultOptions("svc", 8080)
	base.Client.Endpoints = []string{"127.0.0.1:2379"}
	for _, c := range []struct {
		name string
		mod  func(*etcd.Options)
		key  string
	}{
		{"ttl below etcd's minimum", func(o *etcd.Options) { o.TTL = time.Second }, "registry.etcd.ttl"},
		{"ttl not whole seconds", func(o *etcd.Options) { o.TTL = 2500 * time.Millisecond }, "registry.etcd.ttl"},
		{"no endpoints", func(o *etcd.Options) { o.Client.Endpoints = nil }, "registry.etcd.endpoints"},
		{"empty endpoint", func(o *etcd.Options) { o.Client.Endpoints = []string{" "} }, "registry.etcd.endpoints"},
		{"keep-alive too slow", func(o *etcd.Options) { o.KeepAliveInterval = 4 * time.Second }, "registry.etcd.keepalive_interval"},
		{"call timeout too long", func(o *etcd.Options) { o.CallTimeout = 5 * time.Second }, "registry.etcd.call_timeout"},
		{"prefix", func(o *etcd.Options) { o.Prefix = "/x/" }, "registry.etcd.prefix"},
		{"service", func(o *etcd.Options) { o.Service = "a/b" }, "registry.service"},
		{"reserved meta", func(o *etcd.Options) { o.Meta = map[string]string{registry.MetaReadyAt: "x"} }, "registry.meta"},
		{"scheme twice", func(o *etcd.Options) { o.Extra = []registry.Endpoint{{Scheme: "HTTP", Port: 9090}} }, "Options.Extra"},
		{"extra port", func(o *etcd.Options) { o.Extra = []registry.Endpoint{{Scheme: "grpc"}} }, "Options.Extra"},
	} {
		o := base
		c.mod(&o)
		_, err := etcd.New(o)
		var re *budget.RangeError
		if !errors.As(err, &re) || re.Key != c.key {
			t.Errorf("%s: %v, want a RangeError for %s", c.name, err, c.key)
		}
	}
	r, err := etcd.New(base)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.Options(); got.TTL != 10*time.Second || got.KeepAliveInterval != got.TTL/3 || got.CallTimeout != 2*time.Second {
		t.Fatalf("defaults: TTL %s keep-alive %s call timeout %s", got.TTL, got.KeepAliveInterval, got.CallTimeout)
	}
	if r.Options().Address == "" || strconv.Itoa(r.Options().Port) != "8080" {
		t.Fatalf("address %q", r.Options().Address)
	}
}
