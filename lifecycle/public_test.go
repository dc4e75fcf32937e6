package lifecycle_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/lifecycle/lifecycletest"
)

// newLifecycle returns a Lifecycle with o; its zero timings, signals and
// logger become exampleTimings, none and a discarding logger.
func newLifecycle(t *testing.T, o lifecycle.Options) *lifecycle.Lifecycle {
	t.Helper()
	if o.Timings == (budget.Timings{}) {
		o.Timings = exampleTimings()
	}
	if o.Signals == nil {
		o.Signals = []os.Signal{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	lc, err := lifecycle.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return lc
}

func runAsync(ctx context.Context, lc *lifecycle.Lifecycle) <-chan error {
	done := make(chan error, 1)
	go func() { done <- lc.Run(ctx) }()
	return done
}

// awaitState reads sub until a transition to want, for at most 5s.
func awaitState(t *testing.T, sub <-chan lifecycle.Transition, want lifecycle.State) lifecycle.Transition {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case tr := <-sub:
			if tr.To == want {
				return tr
			}
		case <-deadline:
			t.Fatalf("no transition to %s within 5s", want)
		}
	}
}

func awaitRun(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10s")
		return nil
	}
}

// TestDrainThroughThePublicAPI drives one instance from STARTING to STOPPED
// with only the exported API, as a service's main and its admin listener do.
func TestDrainThroughThePublicAPI(t *testing.T) {
	lc := newLifecycle(t, lifecycle.Options{})
	srv := lifecycletest.NewServer()
	lc.AddServer("api", srv)
	end := srv.Begin() // in flight until the test ends it, so the drain waits
	sub, unsubscribe := lc.Subscribe()
	defer unsubscribe()
	if _, ok := lc.Timeline(); ok {
		t.Fatal("a timeline before the drain")
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	done := runAsync(ctx, lc)
	awaitState(t, sub, lifecycle.Ready)
	select {
	case <-lc.Draining():
		t.Fatal("Draining closed while READY")
	default:
	}

	if err := lc.Drain("rollout"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-lc.Draining(): // closed once Drain returned
	default:
		t.Fatal("Draining not closed once Drain returned")
	}
	tr := awaitState(t, sub, lifecycle.Draining)
	if tr.From != lifecycle.Ready || tr.Cause != lifecycle.CauseOperator || tr.Reason != "rollout" {
		t.Errorf("transition %+v", tr)
	}
	if err := lc.Drain("again"); err != nil {
		t.Errorf("a second Drain: %v, want nil (it joins)", err)
	}
	if err := lc.WaitPropagation(context.Background()); err != nil { // no window: at once
		t.Fatal(err)
	}
	<-srv.Serving() // Serve has its ServerHooks, which Begin reports to
	srv.Begin()()   // a stale client still sends
	st := lc.Status()
	if st.State != lifecycle.Draining || st.InFlight.Requests != 1 || st.Timeline == nil ||
		st.Timeline.Reason != "rollout" || st.Timeline.LateArrivals != 1 {
		t.Fatalf("status while draining: %+v", st)
	}
	if err := lc.Restore("too late"); !errors.Is(err, lifecycle.ErrIllegalTransition) {
		t.Errorf("Restore while draining: %v, want ErrIllegalTransition", err)
	}

	end()
	// A preStop hook waited for the window: Run lingers for the kubelet's
	// SIGTERM, or until its context is done.
	stop()
	if err := awaitRun(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	tl, ok := lc.Timeline()
	if !ok || lc.State() != lifecycle.Stopped {
		t.Fatalf("after Run: state %s, timeline %v", lc.State(), ok)
	}
	// The request may end before or after the listeners close: InFlightAtClose
	// is 0 or 1, and either way nothing is cut.
	if !slices.ContainsFunc(tl.Steps, func(s lifecycle.Step) bool { return s.Name == lifecycle.StepIdle }) ||
		tl.InFlightAtClose.Requests > 1 || tl.ForceClosed != 0 {
		t.Errorf("timeline %+v", tl)
	}
	if err := lc.Run(context.Background()); err == nil {
		t.Error("a second Run returned nil")
	}
}

// TestEjectRestoreThroughThePublicAPI: an operator takes a READY instance out
// of rotation and back, as POST /eject and /restore do.
func TestEjectRestoreThroughThePublicAPI(t *testing.T) {
	lc := newLifecycle(t, lifecycle.Options{})
	lc.AddServer("api", lifecycletest.NewServer())
	sub, unsubscribe := lc.Subscribe()
	defer unsubscribe()
	if err := lc.Restore("before READY"); !errors.Is(err, lifecycle.ErrIllegalTransition) {
		t.Errorf("Restore in STARTING: %v, want ErrIllegalTransition", err)
	}
	done := runAsync(context.Background(), lc)
	awaitState(t, sub, lifecycle.Ready)
	if err := lc.Restore("already"); err != nil {
		t.Errorf("Restore of a READY instance: %v", err)
	}
	if err := lc.Eject("investigate"); err != nil {
		t.Fatal(err)
	}
	if tr := awaitState(t, sub, lifecycle.Ejected); tr.Cause != lifecycle.CauseOperator {
		t.Errorf("eject transition %+v", tr)
	}
	if err := lc.Restore("done"); err != nil {
		t.Fatal(err)
	}
	awaitState(t, sub, lifecycle.Ready)
	_ = lc.Drain("test")
	if err := awaitRun(t, done); err != nil {
		t.Fatal(err)
	}
}

// TestStatusJSONHasEmptyLists: without checks or registrars, GET /state's
// "checks" and "registry" are empty lists, not null, so that a client can
// iterate over them (jq '.checks[]').
func TestStatusJSONHasEmptyLists(t *testing.T) {
	b, err := json.Marshal(newLifecycle(t, lifecycle.Options{}).Status())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"checks":[]`, `"registry":[]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("Status JSON lacks %s: %s", want, b)
		}
	}
}
