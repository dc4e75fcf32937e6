package lifecycle

import (
	"context"
	"errors"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer records the calls the lifecycle makes, in order.
type fakeServer struct {
	rec      *recorder
	name     string
	started  chan struct{}
	closed   chan struct{}
	stuck    bool  // AwaitIdle never finishes on its own
	serveErr error // returned by Serve at once
	cut      int
	once     sync.Once
}

func newFakeServer(rec *recorder, name string) *fakeServer {
	return &fakeServer{rec: rec, name: name, started: make(chan struct{}), closed: make(chan struct{})}
}

func (f *fakeServer) Serve(ServerHooks) error {
	f.rec.add(f.name + ".serve")
	close(f.started)
	if f.serveErr != nil {
		return f.serveErr
	}
	<-f.closed
	return nil
}
func (f *fakeServer) LameDuck() { f.rec.add(f.name + ".lameduck") }
func (f *fakeServer) CloseListeners() error {
	f.rec.add(f.name + ".close")
	f.once.Do(func() { close(f.closed) })
	return nil
}
func (f *fakeServer) AwaitIdle(ctx context.Context) error {
	f.rec.add(f.name + ".await")
	if f.stuck {
		<-ctx.Done()
		return ctx.Err()
	}
	return nil
}
func (f *fakeServer) ForceClose() int    { f.rec.add(f.name + ".force"); return f.cut }
func (f *fakeServer) InFlight() InFlight { return InFlight{Requests: 1} }

// fakeRegistrar records Sync/Deregister/Confirm; slow makes Deregister wait
// for its context.
type fakeRegistrar struct {
	rec              *recorder
	deregisterBudget atomic.Int64 // time left until Deregister's deadline, ns
	slow             bool
	synced           chan struct{}
	once             sync.Once
}

func newFakeRegistrar(rec *recorder) *fakeRegistrar {
	return &fakeRegistrar{rec: rec, synced: make(chan struct{})}
}

func (f *fakeRegistrar) Sync(_ context.Context, t Transition) error {
	name := "reg.sync." + t.To.String()
	if t.Cause == CauseOperator {
		name += ".operator"
	}
	f.rec.add(name)
	f.once.Do(func() { close(f.synced) })
	return nil
}
func (f *fakeRegistrar) Deregister(ctx context.Context) error {
	f.rec.add("reg.deregister")
	if d, ok := ctx.Deadline(); ok {
		f.deregisterBudget.Store(int64(time.Until(d)))
	}
	if f.slow {
		<-ctx.Done()
		return errors.New("consul: agent unreachable: " + ctx.Err().Error())
	}
	return nil
}
func (f *fakeRegistrar) Confirm(context.Context) error { f.rec.add("reg.confirm"); return nil }

type recorder struct {
	mu    sync.Mutex
	calls []string
}

func (r *recorder) add(s string) { r.mu.Lock(); r.calls = append(r.calls, s); r.mu.Unlock() }
func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

// observer collects every transition.
type observer struct {
	mu  sync.Mutex
	ts  []Transition
	onT func(Transition)
}

func (o *observer) OnTransition(t Transition) {
	o.mu.Lock()
	o.ts = append(o.ts, t)
	o.mu.Unlock()
	if o.onT != nil {
		o.onT(t)
	}
}
func (o *observer) OnDrainStep(Timeline, Step) {} // seqObserver checks steps
func (o *observer) reached(s State) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, t := range o.ts {
		if t.To == s {
			return true
		}
	}
	return false
}

// fastTimings: a small but valid budget.
func fastTimings(min, quiet, max time.Duration) budget.Timings {
	return budget.Timings{WarmupTimeout: 5 * time.Second, PropagationMin: min, PropagationQuiet: quiet, PropagationMax: max,
		DrainTimeout: time.Second, StopTimeout: time.Second, GracePeriod: max + 5*time.Second}
}

// runAsync starts Run and returns a channel with its result.
func runAsync(l *Lifecycle) <-chan error {
	ch := make(chan error, 1)
	go func() { ch <- l.Run(context.Background()) }()
	return ch
}

func waitState(t *testing.T, l *Lifecycle, s State) {
	t.Helper()
	sub, unsubscribe := l.Subscribe()
	defer unsubscribe()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case tr := <-sub:
			if tr.To == s {
				return
			}
		case <-deadline:
			t.Fatalf("state %s not reached; now %s", s, l.State())
		}
	}
}

func waitResult(t *testing.T, ch <-chan error, within time.Duration) error {
	t.Helper()
	select {
	case err := <-ch:
		return err
	case <-time.After(within):
		t.Fatalf("Run did not return within %v", within)
		return nil
	}
}

// counter is a flip-able readiness check that counts its calls.
type counter struct {
	fail  atomic.Bool
	block atomic.Bool
	calls atomic.Int64
}

func (c *counter) Name() string { return "flip" }
func (c *counter) Check(ctx context.Context) error {
	c.calls.Add(1)
	if c.block.Load() {
		<-ctx.Done()
		return ctx.Err()
	}
	if c.fail.Load() {
		return errors.New("dependency down")
	}
	return nil
}

func (f *fakeRegistrar) StatusDetail() any { return map[string]string{"id": "fake-1"} }
