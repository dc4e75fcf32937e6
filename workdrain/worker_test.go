package workdrain_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/workdrain"
)

// timings are short real timings: a window of 50-100 ms and a drain timeout
// of 300 ms, far inside the grace period so only the drain timeout cuts.
func timings() budget.Timings {
	return budget.Timings{
		WarmupTimeout:  time.Second,
		PropagationMin: 50 * time.Millisecond,
		PropagationMax: 100 * time.Millisecond,
		DrainTimeout:   300 * time.Millisecond,
		StopTimeout:    200 * time.Millisecond,
		GracePeriod:    5 * time.Second,
	}
}

// recorder is an Observer: it records, at each drain step, whether the run
// function's context said stop, and releases ready on READY.
type recorder struct {
	ready   chan struct{}
	runCtx  func() context.Context
	mu      sync.Mutex
	stopped map[string]bool
	changed chan struct{} // closed and replaced at each step recorded
}

func (r *recorder) OnTransition(t lifecycle.Transition) {
	if t.To == lifecycle.Ready {
		close(r.ready)
	}
}

func (r *recorder) OnDrainStep(_ lifecycle.Timeline, s lifecycle.Step) {
	ctx := r.runCtx()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped[s.Name] = ctx != nil && ctx.Err() != nil
	close(r.changed)
	r.changed = make(chan struct{})
}

// stoppedAt waits (10s at most) until step was recorded and reports whether
// the run context was done then.
func (r *recorder) stoppedAt(t *testing.T, step string) bool {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		stopped, ok := r.stopped[step]
		changed := r.changed
		r.mu.Unlock()
		if ok {
			return stopped
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("drain step %s not recorded within 10s", step)
		}
	}
}

// harness runs a Lifecycle with one Worker built by build and drains it once
// READY; done receives Run's result.
type harness struct {
	lc   *lifecycle.Lifecycle
	rec  *recorder
	done chan error
}

func start(t *testing.T, w *workdrain.Worker, runCtx func() context.Context) *harness {
	t.Helper()
	rec := &recorder{ready: make(chan struct{}), runCtx: runCtx, stopped: map[string]bool{}, changed: make(chan struct{})}
	lc, err := lifecycle.New(lifecycle.Options{Timings: timings(), Signals: []os.Signal{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Observers: []lifecycle.Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	lc.AddServer("worker", w)
	h := &harness{lc: lc, rec: rec, done: make(chan error, 1)}
	go func() { h.done <- lc.Run(context.Background()) }()
	select {
	case <-rec.ready:
	case err := <-h.done:
		t.Fatalf("Run returned before READY: %v", err)
	}
	return h
}

func (h *harness) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-h.done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10s")
		return nil
	}
}

// blockingWorker takes one unit on its first loop turn and holds it until
// release is closed; it records its run context.
type blockingWorker struct {
	mu      sync.Mutex
	ctx     context.Context
	taken   chan struct{}
	release chan struct{}
	unitErr chan error // the unit's context cause when it ended
	w       *workdrain.Worker
}

func newBlocking(stopAt workdrain.Phase, honour bool) *blockingWorker {
	b := &blockingWorker{taken: make(chan struct{}), release: make(chan struct{}), unitErr: make(chan error, 1)}
	b.w = workdrain.New(stopAt, func(ctx context.Context, w *workdrain.Worker) error {
		b.mu.Lock()
		b.ctx = ctx
		b.mu.Unlock()
		unitCtx, end, ok := w.Begin()
		if !ok {
			return errors.New("first Begin refused")
		}
		go func() {
			defer end()
			close(b.taken)
			if honour {
				select {
				case <-b.release:
				case <-unitCtx.Done():
				}
			} else {
				<-b.release
			}
			b.unitErr <- context.Cause(unitCtx)
		}()
		<-ctx.Done()
		return ctx.Err()
	})
	return b
}

func (b *blockingWorker) runCtx() context.Context {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ctx
}

// A unit taken before the drain finishes, the run function stops at t0 with
// cause ErrStopped, no new unit is taken, the unit counts as in flight, and
// the drain exits 0 once it ends.
func TestFinishesTakenWorkAtDrainStart(t *testing.T) {
	b := newBlocking(workdrain.AtDrainStart, true)
	h := start(t, b.w, b.runCtx)
	<-b.taken
	if got := h.lc.Status().InFlight.Work; got != 1 {
		t.Fatalf("in_flight.work before the drain = %d, want 1", got)
	}
	if err := h.lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	<-b.runCtx().Done()
	if cause := context.Cause(b.runCtx()); !errors.Is(cause, workdrain.ErrStopped) {
		t.Fatalf("run context cause = %v, want ErrStopped", cause)
	}
	if err := b.w.Do(func(context.Context) error { t.Error("Do ran a unit after the stop"); return nil }); !errors.Is(err, workdrain.ErrStopped) {
		t.Fatalf("Do after the stop = %v, want ErrStopped", err)
	}
	if !h.rec.stoppedAt(t, lifecycle.StepNotReady) {
		t.Fatal("AtDrainStart: the run context was not done at t0")
	}
	if got := h.lc.Status().InFlight.Work; got != 1 {
		t.Fatalf("in_flight.work while draining = %d, want 1", got)
	}
	close(b.release)
	if err := h.wait(t); err != nil {
		t.Fatalf("Run = %v, want nil (the unit finished)", err)
	}
	if cause := <-b.unitErr; cause != nil {
		t.Fatalf("the finished unit's context was cancelled: %v", cause)
	}
	tl, _ := h.lc.Timeline()
	if _, ok := tl.Offset(lifecycle.StepIdle); !ok || tl.ForceClosed != 0 {
		t.Fatalf("timeline: want idle and nothing force-closed, got %+v", tl)
	}
}

// AtWindowEnd keeps taking work through the propagation window: the run
// context is still live at t0 and done when the listeners close.
func TestStopsAtWindowEnd(t *testing.T) {
	b := newBlocking(workdrain.AtWindowEnd, true)
	h := start(t, b.w, b.runCtx)
	<-b.taken
	close(b.release)
	if err := h.lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	if err := h.wait(t); err != nil {
		t.Fatalf("Run = %v, want nil", err)
	}
	if h.rec.stoppedAt(t, lifecycle.StepNotReady) || h.rec.stoppedAt(t, lifecycle.StepWindowEnded) {
		t.Fatal("AtWindowEnd: the run context was done during the window")
	}
	if !h.rec.stoppedAt(t, lifecycle.StepListenersClosed) {
		t.Fatal("AtWindowEnd: the run context was not done when the window ended")
	}
}

// A unit that outlives drain.timeout has its context cancelled with cause
// ErrDrainTimeout and counts as force-closed (exit 1), and so does one that
// ignores its context: the drain does not wait for it.
func TestForceCancelsAtDrainTimeout(t *testing.T) {
	for _, honour := range []bool{true, false} {
		name := map[bool]string{true: "honours", false: "ignores"}[honour]
		t.Run(name, func(t *testing.T) {
			b := newBlocking(workdrain.AtDrainStart, honour)
			defer close(b.release) // the ignoring unit ends with the test
			h := start(t, b.w, b.runCtx)
			<-b.taken
			if err := h.lc.Drain("test"); err != nil {
				t.Fatal(err)
			}
			err := h.wait(t)
			if lifecycle.ExitCode(err) != 1 {
				t.Fatalf("Run = %v, want exit 1 (force-closed)", err)
			}
			tl, _ := h.lc.Timeline()
			if tl.ForceClosed != 1 || tl.InFlightAtClose.Work != 1 {
				t.Fatalf("timeline force_closed = %d, in_flight_at_close.work = %d, want 1 and 1", tl.ForceClosed, tl.InFlightAtClose.Work)
			}
			if _, ok := tl.Offset(lifecycle.StepForceClosed); !ok {
				t.Fatal("no force_closed step")
			}
			if honour {
				select {
				case cause := <-b.unitErr:
					if !errors.Is(cause, workdrain.ErrDrainTimeout) {
						t.Fatalf("unit context cause = %v, want ErrDrainTimeout", cause)
					}
				case <-time.After(10 * time.Second):
					t.Fatal("the unit's context was not cancelled at drain.timeout")
				}
			}
		})
	}
}

// A run function that returns before the drain, with nil or an error, is a
// failure: the lifecycle drains and exits 1.
func TestRunReturningEarlyFails(t *testing.T) {
	for _, ret := range []error{nil, errors.New("broker gone")} {
		w := workdrain.New(workdrain.AtDrainStart, func(context.Context, *workdrain.Worker) error { return ret })
		lc, err := lifecycle.New(lifecycle.Options{Timings: timings(), Signals: []os.Signal{}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		lc.AddServer("worker", w)
		if err := lc.Run(context.Background()); lifecycle.ExitCode(err) != 1 {
			t.Fatalf("run returning %v: Run = %v, want exit 1", ret, err)
		}
	}
}

// A unit that panics is still counted out: Do ends it on the way up.
func TestDoEndsAPanickingUnit(t *testing.T) {
	w := workdrain.New(workdrain.AtDrainStart, func(context.Context, *workdrain.Worker) error { return nil })
	func() {
		defer func() { _ = recover() }()
		_ = w.Do(func(context.Context) error { panic("boom") })
	}()
	if got := w.InFlight().Work; got != 0 {
		t.Fatalf("in flight after a panicking unit = %d, want 0", got)
	}
}
