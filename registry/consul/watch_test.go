package consul

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/consul/consultest"
	"github.com/hashicorp/consul/api"
)

// countingClient returns a consul/api client for a whose HTTP requests are
// counted (instrumentation of the real client; the agent is real). rewrite,
// if any, is applied to every response.
func countingClient(t *testing.T, a *consultest.Agent, rewrite ...func(*http.Response)) (*api.Client, *atomic.Int64) {
	n := &atomic.Int64{}
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	cfg := a.Config()
	cfg.HttpClient = &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		n.Add(1)
		resp, err := base.RoundTrip(r)
		for _, f := range rewrite {
			if err == nil {
				f(resp)
			}
		}
		return resp, err
	})}
	c, err := api.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, n
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// recorder collects every view a watch delivers.
type recorder struct {
	mu    sync.Mutex
	views []registry.View
}

func (r *recorder) add(v registry.View) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.views = append(r.views, v)
}

func (r *recorder) all() []registry.View {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]registry.View(nil), r.views...)
}

// TestWatchSeesAddAndRemove: a watch delivers the passing instances as they
// come and go, stamped with increasing indexes; a timed-out blocking query
// delivers nothing.
func TestWatchSeesAddAndRemove(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	wc, reqs := countingClient(t, a)
	w := NewWatcher(wc, "web", WatchOptions{WaitTime: 300 * time.Millisecond})
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	v, err := w.WaitFor(ctx, func(v registry.View) bool { return v.Revision > 0 })
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Instances) != 0 || v.Instances == nil || v.Err != nil || v.Received.IsZero() || v.Service != "web" {
		t.Fatalf("first view %+v; want an empty, non-nil list", v)
	}
	reg := func(id string, port int) {
		if err := c.Agent().ServiceRegister(&api.AgentServiceRegistration{ID: id, Name: "web", Port: port,
			Check: &api.AgentServiceCheck{CheckID: "service:" + id, TTL: "1h", Status: api.HealthPassing}}); err != nil {
			t.Fatal(err)
		}
	}
	reg("web-b", 2)
	reg("web-a", 1)
	v2, err := w.WaitFor(ctx, func(v registry.View) bool { return len(v.Instances) == 2 })
	if err != nil {
		t.Fatal(err)
	}
	if v2.Revision <= v.Revision || v2.Instances[0].ID != "web-a" || v2.Instances[0].Address != "127.0.0.1" ||
		v2.Instances[1].HostPort() != "127.0.0.1:2" {
		t.Fatalf("view %+v after %+v", v2, v)
	}
	if err := c.Agent().UpdateTTL("service:web-b", "", api.HealthCritical); err != nil {
		t.Fatal(err)
	}
	v3, err := w.WaitFor(ctx, func(v registry.View) bool { return !v.Has("web-b") })
	if err != nil {
		t.Fatal(err)
	}
	if !v3.Has("web-a") || v3.Revision <= v2.Revision {
		t.Fatalf("view after web-b went critical: %+v", v3)
	}

	// Quiet: queries time out every 300ms and deliver nothing new.
	before, n0 := v3, reqs.Load()
	time.Sleep(time.Second) // observation period for the rate of queries
	n := reqs.Load() - n0
	latest, _ := w.Latest()
	if latest.Revision != before.Revision || latest.Received != before.Received {
		t.Fatalf("a view was delivered without a change: %+v", latest)
	}
	if n < 2 || n > 6 {
		t.Fatalf("%d queries in 1s of quiet with WaitTime 300ms; want about 3", n)
	}

	// Close ends the watch and closes C.
	w.Close()
	for range w.C {
	}
	w.Close()
}

// TestWatchKeepsLastKnownGoodAcrossAgentRestart: while the agent is down the
// watch delivers errors carrying the last good instances and backs off
// instead of spinning; after a restart without state the index goes
// backwards, the watch starts again from 0, and follows the instance as its
// registrar registers it again.
func TestWatchKeepsLastKnownGoodAcrossAgentRestart(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	o, _ := testOptions(t, a, "watched", 18095)
	r := newRegistrar(t, o)
	if err := r.Sync(context.Background(), lifecycle.Transition{To: lifecycle.Ready, Cause: lifecycle.CauseWarmup}); err != nil {
		t.Fatal(err)
	}
	// Raise the service's index well above what a fresh agent starts with.
	for i := range 20 {
		id := fmt.Sprintf("churn-%d", i)
		if err := c.Agent().ServiceRegister(&api.AgentServiceRegistration{ID: id, Name: o.Service, Port: 1}); err != nil {
			t.Fatal(err)
		}
		if err := c.Agent().ServiceDeregister(id); err != nil {
			t.Fatal(err)
		}
	}

	wc, reqs := countingClient(t, a)
	rec := &recorder{}
	w := NewWatcher(wc, o.Service, WatchOptions{WaitTime: 2 * time.Second, MinBackoff: 50 * time.Millisecond, MaxBackoff: 400 * time.Millisecond})
	defer w.Close()
	go func() {
		for v := range w.C {
			rec.add(v)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	good, err := w.WaitFor(ctx, func(v registry.View) bool { return v.Err == nil && v.Has(r.ID()) && !v.Has("churn-19") })
	if err != nil {
		t.Fatalf("%v: %+v", err, good)
	}
	t.Logf("index before the restart: %d", good.Revision)

	a.Stop()
	bad, err := w.WaitFor(ctx, func(v registry.View) bool { return v.Err != nil })
	if err != nil {
		t.Fatal(err)
	}
	if !bad.Has(r.ID()) || bad.Revision != good.Revision || !bad.Received.Equal(good.Received) || bad.ErrAt.Before(good.Received) {
		t.Fatalf("error view %+v does not keep the last good view %+v", bad, good)
	}
	n0 := reqs.Load()
	time.Sleep(1500 * time.Millisecond) // observation period with the agent down
	down := reqs.Load() - n0
	t.Logf("%d queries in 1.5s with the agent down (backoff 50ms..400ms)", down)
	if down > 20 {
		t.Fatalf("%d queries in 1.5s with the agent down: the watch spins", down)
	}
	if down < 3 {
		t.Fatalf("only %d queries in 1.5s with the agent down: the watch stopped retrying", down)
	}

	a.Restart(t)
	after, err := w.WaitFor(ctx, func(v registry.View) bool { return v.Err == nil && v.Has(r.ID()) && v.Received.After(bad.ErrAt) })
	if err != nil {
		t.Fatalf("instance not back in the watch: %v (latest %+v)", err, after)
	}
	t.Logf("index after the restart: %d", after.Revision)
	if after.Revision >= good.Revision {
		t.Fatalf("index after the restart %d is not below %d: the test did not exercise a backwards index", after.Revision, good.Revision)
	}
	// The recorded sequence: good views, then errors (all keeping the
	// instance), then good views with the lower index.
	var sawErr bool
	for _, v := range rec.all() {
		if v.Err != nil {
			sawErr = true
			if !v.Has(r.ID()) {
				t.Fatalf("an error view lost the last good instances: %+v", v)
			}
		}
	}
	if !sawErr {
		t.Fatal("no error view reached the channel reader")
	}
}

func TestWatchArguments(t *testing.T) {
	if err := Watch(context.Background(), nil, "x", WatchOptions{}, func(registry.View) {}); err == nil {
		t.Fatal("nil client accepted")
	}
	c, err := api.NewClient(api.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := Watch(context.Background(), c, "", WatchOptions{}, func(registry.View) {}); err == nil {
		t.Fatal("empty service accepted")
	}
}

// TestWatchReportsRecoveryAtOnce (issue 9 item 3): with the default options
// (1m blocking queries), after the agent was down and comes back, the watch
// delivers a view without error within a second, not when the next blocking
// query would time out.
func TestWatchReportsRecoveryAtOnce(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	if err := c.Agent().ServiceRegister(&api.AgentServiceRegistration{ID: "rec-1", Name: "rec", Port: 1,
		Check: &api.AgentServiceCheck{CheckID: "service:rec-1", TTL: "1h", Status: api.HealthPassing}}); err != nil {
		t.Fatal(err)
	}
	w := NewWatcher(a.Client(t), "rec", WatchOptions{})
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if v, err := w.WaitFor(ctx, func(v registry.View) bool { return v.Has("rec-1") }); err != nil {
		t.Fatalf("%v: %+v", err, v)
	}

	for round := range 2 { // twice: the second outage follows a recovery
		a.Stop()
		if v, err := w.WaitFor(ctx, func(v registry.View) bool { return v.Err != nil }); err != nil {
			t.Fatalf("round %d: no error view with the agent down: %v (%+v)", round, err, v)
		}
		a.Restart(t)
		up := time.Now()
		v, err := w.WaitFor(ctx, func(v registry.View) bool { return v.Err == nil })
		if err != nil {
			t.Fatalf("round %d: no recovery: %v (%+v)", round, err, v)
		}
		took := time.Since(up)
		t.Logf("round %d: recovery delivered %s after the agent was up again (revision %d)", round, took.Round(time.Millisecond), v.Revision)
		if took > time.Second {
			t.Fatalf("round %d: recovery delivered %s after the agent answered again; want within 1s", round, took)
		}
		if v.Has("rec-1") || v.Instances == nil || v.Source != SourceName {
			t.Fatalf("round %d: view after a restart without state: %+v", round, v)
		}
	}
}

// indexZeroClient returns a client for a whose answers carry
// X-Consul-Index 0, as from a Consul-compatible endpoint without blocking
// queries (the agent is real; only the header is rewritten), and counts its
// requests.
func indexZeroClient(t *testing.T, a *consultest.Agent) (*api.Client, *atomic.Int64) {
	return countingClient(t, a, func(resp *http.Response) { resp.Header.Set("X-Consul-Index", "0") })
}

// TestWatchDeliversOnlyChanges (issue 9 item 3): with an index that stays 0
// every query answers at once (about ten a second); the watch delivers the
// first view and then only views that changed, not one per answer.
func TestWatchDeliversOnlyChanges(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	zc, reqs := indexZeroClient(t, a)
	var delivered atomic.Int64
	latest := make(chan registry.View, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Watch(ctx, zc, "zero", WatchOptions{}, func(v registry.View) {
			delivered.Add(1)
			syncx.Offer(latest, v)
		})
	}()
	defer func() { cancel(); <-done }()

	quiet := func(what string, want int64) {
		t.Helper()
		n0 := reqs.Load()
		time.Sleep(1500 * time.Millisecond) // observation period: answers keep coming, views must not
		n := reqs.Load() - n0
		t.Logf("%s: %d queries in 1.5s, %d views delivered in all", what, n, delivered.Load())
		if n < 5 {
			t.Fatalf("%s: only %d queries in 1.5s: the test did not exercise repeated answers", what, n)
		}
		if got := delivered.Load(); got != want {
			t.Fatalf("%s: %d views delivered, want %d: identical views were delivered again", what, got, want)
		}
	}
	quiet("before any instance", 1)
	if err := c.Agent().ServiceRegister(&api.AgentServiceRegistration{ID: "zero-1", Name: "zero", Port: 1,
		Check: &api.AgentServiceCheck{CheckID: "service:zero-1", TTL: "1h", Status: api.HealthPassing}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(5 * time.Second)
	for v := (registry.View{}); !v.Has("zero-1"); {
		select {
		case v = <-latest:
		case <-deadline:
			t.Fatal("the new instance was not delivered within 5s")
		}
	}
	quiet("after the instance registered", 2)
}

// TestWatchReportsHungAgent: a hung agent (SIGSTOP: connections stay open,
// nothing answers) shows as an error view once the blocking query outlives
// its bound (WaitTime + WaitTime/16 + queryMargin), instead of a watch that
// waits forever; after SIGCONT the recovery is delivered at once.
func TestWatchReportsHungAgent(t *testing.T) {
	a := consultest.Start(t)
	const wait = time.Second
	w := NewWatcher(a.Client(t), "hung", WatchOptions{WaitTime: wait})
	defer w.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if v, err := w.WaitFor(ctx, func(v registry.View) bool { return v.Revision > 0 }); err != nil {
		t.Fatalf("%v: %+v", err, v)
	}
	if err := a.Pause(); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	v, err := w.WaitFor(ctx, func(v registry.View) bool { return v.Err != nil })
	if err != nil {
		_ = a.Resume()
		t.Fatalf("no error view with the agent hung: %v (%+v)", err, v)
	}
	took := time.Since(paused)
	t.Logf("hung agent reported after %s: %v", took.Round(time.Millisecond), v.Err)
	if limit := wait + wait/16 + queryMargin + 2*time.Second; took > limit {
		t.Fatalf("hung agent reported after %s; want within %s", took, limit)
	}
	if err := a.Resume(); err != nil {
		t.Fatal(err)
	}
	resumed := time.Now()
	if v, err := w.WaitFor(ctx, func(v registry.View) bool { return v.Err == nil }); err != nil {
		t.Fatalf("no recovery after SIGCONT: %v (%+v)", err, v)
	}
	t.Logf("recovery delivered %s after SIGCONT", time.Since(resumed).Round(time.Millisecond))
	if took := time.Since(resumed); took > 5*time.Second {
		t.Fatalf("recovery delivered %s after SIGCONT; want within 5s", took)
	}
}
