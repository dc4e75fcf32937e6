package consumer_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/registry"
)

func TestRoundRobinOverStaticList(t *testing.T) {
	a, b, c := newBackend(t, "a", nil), newBackend(t, "b", nil), newBackend(t, "c", nil)
	src, err := consumer.Static("orders", a.addr(), b.addr(), c.addr())
	if err != nil {
		t.Fatal(err)
	}
	_, tr, _ := newClient(t, src, consumer.WatcherOptions{}, consumer.Options{})
	for range 30 {
		if _, err := do(tr, "GET", ""); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range []*backend{a, b, c} {
		if n := x.hits.Load(); n != 10 {
			t.Errorf("backend %s served %d of 30 requests, want 10", x.name, n)
		}
	}
	if s := tr.Status(); s.Requests != 30 || s.Retries != 0 || s.Source != "static" || s.Instances != 3 {
		t.Errorf("status = %v, want 30 requests, 0 retries, 3 static instances", s)
	}
}

func TestStaticRejectsBadAddress(t *testing.T) {
	for _, addr := range []string{"nohost", "127.0.0.1:0", "127.0.0.1:x", "127.0.0.1:70000"} {
		if _, err := consumer.Static("orders", addr); err == nil || !strings.Contains(err.Error(), addr) {
			t.Errorf("Static(%q) error = %v, want one naming the address", addr, err)
		}
	}
}

func TestWrongHostIsAnError(t *testing.T) {
	src, _ := consumer.Static("orders", newBackend(t, "a", nil).addr())
	_, tr, _ := newClient(t, src, consumer.WatcherOptions{}, consumer.Options{})
	req, _ := http.NewRequest("GET", "http://payments/x", nil)
	if _, err := tr.RoundTrip(req); err == nil || !strings.Contains(err.Error(), `"payments"`) {
		t.Fatalf("error = %v, want one naming the host", err)
	}
}

// A refused dial never wrote anything: any method goes to another instance,
// and the dead one is ejected after 3 consecutive failures.
func TestRefusedDialFailsOverWhateverTheMethod(t *testing.T) {
	dead := deadBackend(t, "dead")
	var mu sync.Mutex
	var bodies []string
	live := newBackend(t, "live", func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 64)
		n, _ := r.Body.Read(b)
		mu.Lock()
		bodies = append(bodies, string(b[:n]))
		mu.Unlock()
	})
	f := newFeed()
	f.push(1, dead, live)
	_, tr, logs := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{})
	for i := range 20 {
		if _, err := do(tr, "POST", "order-"+string(rune('a'+i))); err != nil {
			t.Fatalf("POST %d: %v", i, err)
		}
	}
	if len(bodies) != 20 || bodies[0] != "order-a" {
		t.Errorf("the live backend got %d bodies (first %q), want 20 replayed intact", len(bodies), bodies[0])
	}
	var out consumer.Outcome
	req, _ := http.NewRequestWithContext(consumer.WithOutcome(context.Background(), &out), "GET", "http://orders/x", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if out.Addr != live.addr() || out.Attempts != 1 {
		t.Errorf("outcome = %+v, want one attempt to %s", out, live.addr())
	}
	if ins := tr.Instances(); len(ins) != 2 || !ins[0].Ejected || ins[1].Ejected {
		t.Errorf("Instances() = %+v, want dead ejected, live not", ins)
	}
	s := tr.Status()
	if s.Ejections != 1 || s.Ejected != 1 || s.Retries != 3 || s.Failures != 0 {
		t.Errorf("status = %v, want 1 ejection after 3 retried refusals, 0 failures", s)
	}
	if !strings.Contains(logs.String(), "instance ejected") {
		t.Error("the ejection was not logged")
	}
}

// A POST that was written and then cut is not retried (the server may have
// acted on it); a GET cut the same way is.
func TestWrittenRequestRetriedOnlyIfIdempotent(t *testing.T) {
	cut := newBackend(t, "cut", func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	})
	ok := newBackend(t, "ok", nil)
	f := newFeed()
	f.push(1, cut, ok)
	_, tr, _ := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{Outlier: consumer.OutlierDetection{Consecutive: -1}})
	postFailed := 0
	for range 4 {
		if _, err := do(tr, "POST", "x"); err != nil {
			postFailed++
		}
	}
	if postFailed != 2 || cut.hits.Load() != 2 {
		t.Errorf("%d of 4 POSTs failed, the cutting backend saw %d: want 2 and 2 (no retry of a written POST)", postFailed, cut.hits.Load())
	}
	for range 4 {
		if _, err := do(tr, "GET", ""); err != nil {
			t.Errorf("GET: %v (a cut idempotent request must be retried)", err)
		}
	}
	req, _ := http.NewRequestWithContext(consumer.WithIdempotent(context.Background()), "POST", "http://orders/x", strings.NewReader("x"))
	for range 2 {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("POST marked idempotent: %v", err)
		}
		resp.Body.Close()
		req.Body, _ = req.GetBody()
	}
}

func TestRetryBudgetBoundsRetries(t *testing.T) {
	cut := func(w http.ResponseWriter, r *http.Request) {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
	}
	a, b := newBackend(t, "a", cut), newBackend(t, "b", cut)
	f := newFeed()
	f.push(1, a, b)
	_, tr, _ := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{
		Outlier: consumer.OutlierDetection{Consecutive: -1},
		Budget:  consumer.RetryBudget{Percent: 10, MinPerSecond: 1},
	})
	for range 50 {
		do(tr, "GET", "")
	}
	s := tr.Status()
	// 10 % of 50 requests plus 1 per second over at most a few seconds.
	if s.Retries > 12 || s.BudgetExhausted == 0 || s.Failures != 50 {
		t.Errorf("status = %v, want at most ~10%% retries, the budget exhausted, 50 failures", s)
	}
}

// Killing 3 of 4 instances with max ejection 50 %: two are ejected, the third
// is not, and the transport says it is in panic mode.
func TestPanicModeInsteadOfEjectingAll(t *testing.T) {
	bs := []*backend{newBackend(t, "a", nil), newBackend(t, "b", nil), newBackend(t, "c", nil), newBackend(t, "d", nil)}
	f := newFeed()
	f.push(1, bs...)
	_, tr, logs := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{
		Outlier: consumer.OutlierDetection{MaxEjectionPercent: 50, BaseEjectionTime: time.Minute},
		Budget:  consumer.RetryBudget{Percent: 100},
	})
	for _, b := range bs[:3] {
		b.Close()
	}
	for range 60 {
		do(tr, "GET", "")
	}
	s := tr.Status()
	if s.Ejected != 2 || !s.PanicMode || s.PanicEntries != 1 {
		t.Errorf("status = %v, want 2 ejected (50 %% of 4) and panic mode", s)
	}
	if !strings.Contains(logs.String(), "panic mode") {
		t.Error("panic mode was not logged")
	}
	if bs[3].hits.Load() == 0 {
		t.Error("the live instance served nothing")
	}
}

// After its ejection an instance gets one real request (half-open probe);
// it is restored when that succeeds.
func TestHalfOpenProbeRestores(t *testing.T) {
	live := newBackend(t, "live", nil)
	dead := deadBackend(t, "back")
	f := newFeed()
	f.push(1, live, dead)
	_, tr, logs := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{
		Outlier: consumer.OutlierDetection{BaseEjectionTime: 300 * time.Millisecond},
	})
	eventually(t, 5*time.Second, "ejection", func() bool { do(tr, "GET", ""); return tr.Status().Ejected == 1 })
	// The same address serves again.
	ln, err := net.Listen("tcp", dead.addr())
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", dead.addr(), err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	go srv.Serve(ln)
	defer srv.Close()
	eventually(t, 5*time.Second, "restoration by a probe", func() bool {
		if _, err := do(tr, "GET", ""); err != nil {
			t.Fatalf("GET while probing: %v", err)
		}
		return tr.Status().Ejected == 0
	})
	if !strings.Contains(logs.String(), "restored by its half-open probe") {
		t.Error("the restoration was not logged")
	}
}

// Idle connections to an instance that left the view are closed.
func TestIdleConnectionsOfDepartedInstanceClosed(t *testing.T) {
	a := newBackend(t, "a", nil)
	closed := make(chan struct{}, 16)
	b := newBackendConnState(t, "b", nil, func(c net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed <- struct{}{}
		}
	})
	f := newFeed()
	f.push(1, a, b)
	_, tr, _ := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{})
	for range 4 {
		if _, err := do(tr, "GET", ""); err != nil {
			t.Fatal(err)
		}
	}
	f.push(2, a)
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the departed instance's idle connection was not closed")
	}
}

// A provider that answers "Connection: close" (as a draining one does) costs
// no request.
func TestConnectionCloseHonoured(t *testing.T) {
	a := newBackend(t, "a", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
	})
	f := newFeed()
	f.push(1, a)
	_, tr, _ := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{})
	for i := range 50 {
		if _, err := do(tr, "GET", ""); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if s := tr.Status(); s.Retries != 0 {
		t.Errorf("retries = %d, want 0", s.Retries)
	}
}

func TestSlowStartRampsNewInstance(t *testing.T) {
	bs := []*backend{newBackend(t, "a", nil), newBackend(t, "b", nil), newBackend(t, "c", nil), newBackend(t, "new", nil)}
	long := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano)
	ins := []registry.Instance{}
	for _, b := range bs {
		in := b.instance()
		in.Meta = map[string]string{registry.MetaReadyAt: long}
		ins = append(ins, in)
	}
	ins[3].Meta[registry.MetaReadyAt] = time.Now().UTC().Format(time.RFC3339Nano)
	_, tr, _ := newClient(t, consumer.StaticInstances("orders", ins), consumer.WatcherOptions{},
		consumer.Options{SlowStart: consumer.SlowStart{Window: time.Minute, MinWeightPercent: 10}})
	for range 400 {
		if _, err := do(tr, "GET", ""); err != nil {
			t.Fatal(err)
		}
	}
	// Weight ~0.1: about 10 % of its fair share of 100.
	if n := bs[3].hits.Load(); n > 40 || n == 0 {
		t.Errorf("the new instance served %d of 400 requests, want a ramped share (1-40)", n)
	}
	if !tr.Status().SlowStart {
		t.Error("Status.SlowStart = false")
	}
}

func TestSlowStartOffWhenMostInstancesAreNew(t *testing.T) {
	bs := []*backend{newBackend(t, "a", nil), newBackend(t, "b", nil), newBackend(t, "c", nil)}
	ins := []registry.Instance{}
	for _, b := range bs {
		in := b.instance()
		in.Meta = map[string]string{registry.MetaReadyAt: time.Now().UTC().Format(time.RFC3339Nano)}
		ins = append(ins, in)
	}
	_, tr, _ := newClient(t, consumer.StaticInstances("orders", ins), consumer.WatcherOptions{},
		consumer.Options{SlowStart: consumer.SlowStart{Window: time.Minute}})
	for range 30 {
		do(tr, "GET", "")
	}
	for _, b := range bs {
		if n := b.hits.Load(); n != 10 {
			t.Errorf("%s served %d of 30, want 10 (no ramp in a fresh deployment)", b.name, n)
		}
	}
}

func TestLeastRequestAvoidsBusyInstance(t *testing.T) {
	release := make(chan struct{})
	slow := newBackend(t, "slow", func(w http.ResponseWriter, r *http.Request) { <-release })
	fast := newBackend(t, "fast", nil)
	f := newFeed()
	f.push(1, slow, fast)
	_, tr, _ := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{Balancing: consumer.LeastRequest})
	var wg sync.WaitGroup
	for range 4 { // occupy slow
		wg.Go(func() { do(tr, "GET", "") })
	}
	eventually(t, 5*time.Second, "slow instance busy", func() bool { return slow.hits.Load() > 0 })
	before := slow.hits.Load()
	for range 40 {
		do(tr, "GET", "")
	}
	close(release)
	wg.Wait()
	if extra := slow.hits.Load() - before; extra > 15 {
		t.Errorf("the busy instance got %d of 40 more requests, want few", extra)
	}
}

func TestFailFastWhenDegraded(t *testing.T) {
	a := newBackend(t, "a", nil)
	src := registry.SourceFunc(func(ctx context.Context, fn func(registry.View)) error {
		fn(registry.View{Service: "orders", Instances: []registry.Instance{a.instance()}, Revision: 1, Received: time.Now(), Source: "user"})
		fn(registry.View{Service: "orders", Err: errors.New("registry unreachable"), ErrAt: time.Now()})
		<-ctx.Done()
		return ctx.Err()
	})
	_, tr, _ := newClient(t, src, consumer.WatcherOptions{MaxStaleness: 200 * time.Millisecond}, consumer.Options{FailFast: true})
	eventually(t, 5*time.Second, "degraded", func() bool { return tr.Status().Degraded })
	if _, err := do(tr, "GET", ""); !errors.Is(err, consumer.ErrDegraded) {
		t.Errorf("error = %v, want ErrDegraded", err)
	}
}

// Requests made before the first view wait for it.
func TestRequestWaitsForFirstView(t *testing.T) {
	a := newBackend(t, "a", nil)
	src := registry.SourceFunc(func(ctx context.Context, fn func(registry.View)) error {
		select {
		case <-time.After(200 * time.Millisecond): // a registry that answers late
		case <-ctx.Done():
			return ctx.Err()
		}
		fn(registry.View{Instances: []registry.Instance{a.instance()}, Source: "slow"})
		<-ctx.Done()
		return ctx.Err()
	})
	lg, _ := testLogger(t)
	w, err := consumer.NewWatcher(consumer.WatcherOptions{Source: src, Service: "orders", Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tr, err := consumer.NewTransport(w, "", consumer.Options{Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if _, err := do(tr, "GET", ""); err != nil {
		t.Fatalf("request before the first view: %v", err)
	}
}

// When the view shrinks to instances that are all ejected, requests still go
// to one of them (panic routing) instead of failing with ErrNoInstance.
func TestAllCandidatesEjectedStillRoutes(t *testing.T) {
	a, b := deadBackend(t, "a"), deadBackend(t, "b")
	c, d := newBackend(t, "c", nil), newBackend(t, "d", nil)
	f := newFeed()
	f.push(1, a, b, c, d)
	_, tr, _ := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{
		Outlier: consumer.OutlierDetection{BaseEjectionTime: time.Minute}})
	eventually(t, 5*time.Second, "a and b ejected", func() bool { do(tr, "GET", ""); return tr.Status().Ejected == 2 })
	ln, err := net.Listen("tcp", a.addr())
	if err != nil {
		t.Skipf("cannot listen on %s again: %v", a.addr(), err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	go srv.Serve(ln)
	defer srv.Close()
	f.push(2, a, b)
	eventually(t, 5*time.Second, "view of a and b", func() bool { return tr.Status().Instances == 2 })
	for i := range 6 {
		if _, err := do(tr, "GET", ""); err != nil {
			t.Fatalf("request %d with every candidate ejected: %v", i, err)
		}
	}
}
