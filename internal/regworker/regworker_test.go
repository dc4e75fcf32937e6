package regworker_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/regworker"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var errClosed = errors.New("closed")

// A kicked worker steps at once; Await returns the outcome of the awaited
// generation; after Stop, Await reports the stop.
func TestWorkerKickAwaitStop(t *testing.T) {
	var w regworker.Worker
	var gen atomic.Uint64
	step := func(context.Context) regworker.Outcome {
		g := gen.Load()
		return regworker.Outcome{Gen: g, Err: errors.New("step " + string(rune('0'+g)))}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	gen.Store(1)
	done := w.Kick(time.Hour, step) // the period never elapses: only the kick steps
	if err := w.Await(ctx, done, 1, errClosed); err == nil || err.Error() != "step 1" {
		t.Fatalf("Await(1) = %v, want step 1", err)
	}
	gen.Store(2)
	if d := w.Kick(time.Hour, step); d != done {
		t.Fatal("a second Kick started a second goroutine")
	}
	if err := w.Await(ctx, done, 2, errClosed); err == nil || err.Error() != "step 2" {
		t.Fatalf("Await(2) = %v, want step 2", err)
	}
	if !w.Stop(ctx) {
		t.Fatal("Stop did not see the goroutine return")
	}
	if err := w.Await(ctx, done, 3, errClosed); !errors.Is(err, errClosed) {
		t.Fatalf("Await after Stop = %v, want errClosed", err)
	}
}

// Without kicks, the worker steps every period.
func TestWorkerPeriod(t *testing.T) {
	var w regworker.Worker
	var n atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := w.Kick(time.Millisecond, func(context.Context) regworker.Outcome {
		return regworker.Outcome{Gen: uint64(n.Add(1))}
	})
	if err := w.Await(ctx, done, 5, errClosed); err != nil {
		t.Fatalf("Await(5) = %v", err)
	}
	w.Stop(ctx)
}

// Stop of a worker that never ran reports true at once.
func TestStopNeverStarted(t *testing.T) {
	var w regworker.Worker
	if !w.Stop(context.Background()) {
		t.Fatal("Stop = false for a worker that never ran")
	}
}

// Retry retries until the attempt succeeds, and gives up at ctx's deadline
// with the last error.
func TestRetry(t *testing.T) {
	calls := 0
	n, err := regworker.Retry(context.Background(), func() error {
		if calls++; calls < 3 {
			return errors.New("down")
		}
		return nil
	})
	if n != 3 || err != nil {
		t.Fatalf("Retry = %d, %v; want 3, nil", n, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	down := errors.New("down")
	n, err = regworker.Retry(ctx, func() error { return down })
	if n < 2 || !errors.Is(err, down) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Retry = %d, %v; want at least 2 attempts, down and the deadline", n, err)
	}
}

// Streak logs a streak's first failure at Warn, later ones at Debug, and its
// end at Info.
func TestStreak(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := regworker.Streak{Log: log, Failing: "first", Again: "again", Recovered: "back"}
	var st registry.Status
	s.Failed(&st, "op", errors.New("e1"))
	s.Failed(&st, "op", errors.New("e2"))
	if st.LastError != "op: e2" || st.LastErrorAt.IsZero() {
		t.Fatalf("status after failures = %+v", st)
	}
	s.Wrote(&st, func(st *registry.Status) { st.Health = registry.Passing })
	if st.LastError != "" || st.LastWrite.IsZero() || st.Health != registry.Passing {
		t.Fatalf("status after write = %+v", st)
	}
	out := buf.String()
	for _, want := range []string{"level=WARN msg=first", "level=DEBUG msg=again", "level=INFO msg=back"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// A step cancelled by Stop publishes nothing: Sync callers see the stop, not
// the cancelled step's error.
func TestWorkerCancelledStepNotPublished(t *testing.T) {
	var w regworker.Worker
	started := make(chan struct{})
	done := w.Kick(time.Hour, func(ctx context.Context) regworker.Outcome {
		close(started)
		<-ctx.Done()
		return regworker.Outcome{Gen: 1, Err: ctx.Err()}
	})
	<-started
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if !w.Stop(ctx) {
		t.Fatal("Stop did not see the goroutine return")
	}
	if err := w.Await(ctx, done, 1, errClosed); !errors.Is(err, errClosed) {
		t.Fatalf("Await = %v, want errClosed", err)
	}
}

// Core: EJECTED before the first READY changes nothing and starts no
// worker; READY starts it with the READY time; after BeginDeregister, Sync
// refuses with registry.ErrDeregistered and a second BeginDeregister
// reports that it was begun; after Close, Sync returns the closed error.
func TestCore(t *testing.T) {
	var log bytes.Buffer
	c := regworker.NewCore(registry.Status{ID: "i", Health: registry.Absent},
		regworker.Streak{Log: slog.New(slog.NewTextHandler(&log, nil))}, errClosed)
	var steps atomic.Int64
	step := func(context.Context) regworker.Outcome {
		steps.Add(1)
		return regworker.Outcome{Gen: c.Wanted().Gen}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Sync(ctx, lifecycle.Transition{To: lifecycle.Ejected, Reason: "checks"}, time.Hour, step); err != nil {
		t.Fatalf("Sync(EJECTED) before READY = %v", err)
	}
	if w := c.Wanted(); !w.ReadyAt.IsZero() || w.Health != registry.Critical || steps.Load() != 0 {
		t.Fatalf("after EJECTED: wanted %+v, %d steps; want no READY time and no step", w, steps.Load())
	}
	at := time.Now().Add(-time.Second)
	if err := c.Sync(ctx, lifecycle.Transition{To: lifecycle.Ready, At: at, Reason: "warm"}, time.Hour, step); err != nil {
		t.Fatalf("Sync(READY) = %v", err)
	}
	if w := c.Wanted(); !w.ReadyAt.Equal(at) || w.Health != registry.Passing || w.Reason != "READY: warm" || steps.Load() != 1 {
		t.Fatalf("after READY: wanted %+v, %d steps", w, steps.Load())
	}
	if err := c.Sync(ctx, lifecycle.Transition{To: lifecycle.Draining}, time.Hour, step); err == nil {
		t.Fatal("Sync(DRAINING) = nil, want an error")
	}
	if first, stopped := c.BeginDeregister(ctx); !first || !stopped {
		t.Fatalf("BeginDeregister = %v, %v; want true, true", first, stopped)
	}
	if !c.Status().Deregistering {
		t.Fatal("Status().Deregistering = false after BeginDeregister")
	}
	if first, _ := c.BeginDeregister(ctx); first {
		t.Fatal("a second BeginDeregister reported itself first")
	}
	if err := c.Sync(ctx, lifecycle.Transition{To: lifecycle.Ready}, time.Hour, step); !errors.Is(err, registry.ErrDeregistered) {
		t.Fatalf("Sync after BeginDeregister = %v, want registry.ErrDeregistered", err)
	}
	c2 := regworker.NewCore(registry.Status{}, regworker.Streak{Log: slog.New(slog.NewTextHandler(&log, nil))}, errClosed)
	if !c2.Close(ctx) {
		t.Fatal("Close of a Core whose worker never ran reported it still running")
	}
	if err := c2.Sync(ctx, lifecycle.Transition{To: lifecycle.Ready}, time.Hour, step); !errors.Is(err, errClosed) || !c2.Closed() {
		t.Fatalf("Sync after Close = %v, want the closed error", err)
	}
}

// TestCloseBounded: Close returns by its context's end, reporting the
// worker still running, when a step ignores its context (an SDK call that
// takes none); the step ends later and the worker with it.
func TestCloseBounded(t *testing.T) {
	c := regworker.NewCore(registry.Status{}, regworker.Streak{Log: slog.New(slog.DiscardHandler)}, errors.New("closed"))
	release, entered := make(chan struct{}), make(chan struct{})
	step := func(context.Context) regworker.Outcome {
		close(entered)
		<-release // a call that takes no context
		return regworker.Outcome{Gen: c.Wanted().Gen}
	}
	sctx, scancel := context.WithCancel(context.Background())
	scancel() // Sync only kicks the worker here; the step runs on
	_ = c.Sync(sctx, lifecycle.Transition{To: lifecycle.Ready}, time.Hour, step)
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if c.Close(ctx) {
		t.Fatal("Close reported the worker stopped while its step was blocked")
	}
	close(release)
	if !c.Close(context.Background()) {
		t.Fatal("the worker did not stop once its step returned")
	}
}
