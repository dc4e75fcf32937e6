package lifecycletest_test

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/lifecycle/lifecycletest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newLifecycle returns a Lifecycle with o, which handles no signal and logs
// nowhere; o's zero timings become a short budget with no window.
func newLifecycle(t *testing.T, o lifecycle.Options) *lifecycle.Lifecycle {
	t.Helper()
	if o.Timings == (budget.Timings{}) {
		o.Timings = budget.Timings{WarmupTimeout: time.Second, DrainTimeout: 5 * time.Second,
			StopTimeout: time.Second, GracePeriod: 10 * time.Second}
	}
	o.Signals = []os.Signal{}
	o.Logger = slog.New(slog.DiscardHandler)
	lc, err := lifecycle.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return lc
}

// endAtClose ends a request when the drain records StepListenersClosed, after
// the lifecycle counted it in flight at close.
type endAtClose struct{ end func() }

func (o endAtClose) OnTransition(lifecycle.Transition) {}
func (o endAtClose) OnDrainStep(_ lifecycle.Timeline, s lifecycle.Step) {
	if s.Name == lifecycle.StepListenersClosed {
		o.end()
	}
}

// TestRequestFinishesWithinDrain: a request in flight at t0 holds the drain
// until it ends; nothing is cut and Run exits 0.
func TestRequestFinishesWithinDrain(t *testing.T) {
	ended := make(chan func(), 1) // the request's end, for the observer
	lc := newLifecycle(t, lifecycle.Options{Observers: []lifecycle.Observer{endAtClose{end: func() { (<-ended)() }}}})
	srv := lifecycletest.NewServer()
	lc.AddServer("api", srv)
	sub, unsubscribe := lc.Subscribe()
	defer unsubscribe()
	done := make(chan error, 1)
	go func() { done <- lc.Run(context.Background()) }()
	for tr := range sub {
		if tr.To == lifecycle.Ready {
			break
		}
	}
	<-srv.Serving() // started before READY
	end := srv.Begin()
	if got := srv.InFlight().Requests; got != 1 {
		t.Fatalf("in flight %d, want 1", got)
	}
	ended <- end
	_ = lc.Drain("test")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	end() // a second end does nothing
	tl, _ := lc.Timeline()
	if tl.InFlightAtClose.Requests != 1 || tl.ForceClosed != 0 || tl.LateArrivals != 0 {
		t.Errorf("timeline %+v", tl)
	}
	want := []string{lifecycletest.CallLameDuck, lifecycletest.CallCloseListeners, lifecycletest.CallAwaitIdle}
	if got := srv.Calls(); !slices.Equal(got, want) {
		t.Errorf("calls %v, want %v", got, want)
	}
	select {
	case <-srv.Closed():
	default:
		t.Error("Closed not closed after the drain")
	}
	if srv.InFlight().Requests != 0 {
		t.Errorf("in flight after the drain: %+v", srv.InFlight())
	}
}

// TestBeginAfterT0CountsLate: once Serve has its ServerHooks, a request
// begun after t0 is a late arrival.
func TestBeginAfterT0CountsLate(t *testing.T) {
	lc := newLifecycle(t, lifecycle.Options{})
	srv := lifecycletest.NewServer()
	lc.AddServer("api", srv)
	done := make(chan error, 1)
	go func() { done <- lc.Run(context.Background()) }()
	<-srv.Serving()
	if err := lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	srv.Begin()()
	if tl := lc.Status().Timeline; tl == nil || tl.LateArrivals != 1 {
		t.Errorf("timeline %+v, want 1 late arrival", tl)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestForceCloseCuts: AwaitIdle waits for a request in flight, ForceClose
// cuts it, and its end does nothing after the cut.
func TestForceCloseCuts(t *testing.T) {
	srv := lifecycletest.NewServer()
	srv.Begin()()
	if srv.AwaitIdle(context.Background()) != nil {
		t.Error("AwaitIdle with nothing in flight")
	}
	end := srv.Begin()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := srv.AwaitIdle(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("AwaitIdle with a request in flight and a done ctx: %v", err)
	}
	if n := srv.ForceClose(); n != 1 {
		t.Errorf("ForceClose cut %d, want 1", n)
	}
	end() // after the cut: nothing
	if srv.InFlight().Requests != 0 {
		t.Error("in flight after ForceClose")
	}
}

// TestFailServe: a server whose Serve fails makes Run drain and exit 1.
func TestFailServe(t *testing.T) {
	lc := newLifecycle(t, lifecycle.Options{})
	srv := lifecycletest.NewServer()
	srv.FailServe(errors.New("listener broke"))
	lc.AddServer("api", srv)
	err := lc.Run(context.Background())
	if lifecycle.ExitCode(err) != 1 || !strings.Contains(err.Error(), "server api: listener broke") {
		t.Fatalf("Run: %v, want exit code 1 naming the server and its error", err)
	}
	if got := srv.Calls(); !slices.Equal(got, []string{lifecycletest.CallLameDuck, lifecycletest.CallCloseListeners, lifecycletest.CallAwaitIdle}) {
		t.Errorf("calls %v", got)
	}
}
