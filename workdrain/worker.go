package workdrain

import (
	"context"
	"errors"
	"sync"

	"github.com/drainkit/drainkit/lifecycle"
)

// Phase is the point of the drain at which a Worker stops taking new work.
type Phase int

const (
	// AtDrainStart stops taking work at t0, when readiness starts failing:
	// for a process that is only a worker, nothing waits for the window.
	AtDrainStart Phase = iota
	// AtWindowEnd keeps taking work through the propagation window and stops
	// when it ends, as the listeners close: for a process that also serves
	// requests which enqueue work for it, so what the last requests enqueued
	// is still taken. A process of workers alone that registers nowhere
	// has no window (Worker.Routed): there, it is t0 too.
	AtWindowEnd
)

// String returns "drain_start" or "window_end", as in logs.
func (p Phase) String() string {
	if p == AtWindowEnd {
		return "window_end"
	}
	return "drain_start"
}

var (
	// ErrStopped is the cause of the run function's context once the worker
	// stopped taking work, and what Do returns then.
	ErrStopped = errors.New("workdrain: draining: no new work is taken")
	// ErrDrainTimeout is the cause of every unit's context when drain.timeout
	// ran out before the unit ended: the unit was force-cancelled.
	ErrDrainTimeout = errors.New("workdrain: drain.timeout reached: work force-cancelled")
	// errReturnedEarly is Serve's failure when run returns nil before the
	// drain: background work that ends by itself is a failure, as in
	// oklog/run, so the process drains and exits 1 instead of idling.
	errReturnedEarly = errors.New("workdrain: the run function returned before the drain")
)

// Worker is a lifecycle.Server for background work: a queue consumer, a
// poller, a ticker or any loop. It runs its run function in Serve, like an
// oklog/run actor, and gives "stop" two meanings, in this order:
//
//  1. at its Phase (t0, or the propagation window's end) it stops taking new
//     work: the run function's context is cancelled with cause ErrStopped,
//     and Begin and Do refuse new units from then on;
//  2. the units it took finish within drain.timeout (the lifecycle's
//     AwaitIdle); when that runs out, the units' context is cancelled with
//     cause ErrDrainTimeout and the units still running are counted as
//     force-closed in the timeline (exit code 1).
//
// Units in flight are counted in lifecycle.InFlight.Work, in GET /state and
// the timeline like requests. The drain waits for both: every unit ended and
// the run function returned.
//
// Register it with Lifecycle.AddServer (or drainkit.WithWorker). A Worker is
// used by one Lifecycle, once.
type Worker struct {
	stopAt Phase
	run    func(ctx context.Context, w *Worker) error

	stopCtx    context.Context // the run function's: done at the stop phase
	stop       context.CancelCauseFunc
	workCtx    context.Context // every unit's: done at the drain deadline
	cancelWork context.CancelCauseFunc

	mu       sync.Mutex
	stopped  bool          // no new unit is taken
	inFlight int64         // units begun and not ended
	drained  chan struct{} // closed once stopped and inFlight is 0
	serve    sync.Once
	returned chan struct{} // closed when the run function returned
}

// New returns a Worker that stops taking work at stopAt and runs run in
// Serve. run takes work until ctx is done (cause ErrStopped), running each
// unit through w.Do or w.Begin, and then returns; a unit's own context is
// another one, cancelled only at the drain deadline. run returning a non-nil
// error other than ctx's, or returning nil before the drain, is a failure:
// the lifecycle drains and exits 1.
func New(stopAt Phase, run func(ctx context.Context, w *Worker) error) *Worker {
	w := &Worker{stopAt: stopAt, run: run, drained: make(chan struct{}), returned: make(chan struct{})}
	w.stopCtx, w.stop = context.WithCancelCause(context.Background())
	w.workCtx, w.cancelWork = context.WithCancelCause(context.Background())
	return w
}

// Begin takes one unit of work: it counts the unit as in flight and returns
// the unit's context (cancelled with cause ErrDrainTimeout if the drain
// deadline comes first) and end, which the caller calls once the unit is
// finished, typically deferred (calls after the first do nothing). ok is
// false once the worker stopped taking work: the caller hands the unit back
// (a queue's nak) without starting it; ctx and end are then nil.
func (w *Worker) Begin() (ctx context.Context, end func(), ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return nil, nil, false
	}
	w.inFlight++
	var once sync.Once
	return w.workCtx, func() { once.Do(w.end) }, true
}

// Do runs fn as one unit of work (Begin, fn, end) and returns fn's error,
// or ErrStopped without calling fn once the worker stopped taking work. A
// loop's tick or a poller's batch runs through it.
func (w *Worker) Do(fn func(ctx context.Context) error) error {
	ctx, end, ok := w.Begin()
	if !ok {
		return ErrStopped
	}
	defer end()
	return fn(ctx)
}

func (w *Worker) end() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inFlight--
	if w.stopped && w.inFlight == 0 {
		close(w.drained)
	}
}

// stopTaking moves the worker to stopped once: no unit is taken from now on.
func (w *Worker) stopTaking() {
	w.mu.Lock()
	if !w.stopped {
		w.stopped = true
		if w.inFlight == 0 {
			close(w.drained)
		}
	}
	w.mu.Unlock()
	w.stop(ErrStopped)
}

// Serve runs the run function and returns when it returned: nil if it
// returned after the worker stopped taking work with nil or its context's
// error, else the failure. Only the first call runs it. Background work has
// no arrivals to report, so the ServerHooks go unused.
func (w *Worker) Serve(lifecycle.ServerHooks) error {
	err := errors.New("workdrain: Serve called twice")
	w.serve.Do(func() {
		defer close(w.returned)
		err = w.run(w.stopCtx, w)
		if w.stopCtx.Err() == nil {
			if err == nil {
				err = errReturnedEarly
			}
			return
		}
		if errors.Is(err, context.Canceled) || errors.Is(err, ErrStopped) {
			err = nil
		}
	})
	return err
}

// LameDuck stops taking work if the Phase is AtDrainStart.
func (w *Worker) LameDuck() {
	if w.stopAt == AtDrainStart {
		w.stopTaking()
	}
}

// CloseListeners stops taking work (for AtWindowEnd; AtDrainStart stopped
// already). A worker has no listener; it always returns nil.
func (w *Worker) CloseListeners() error {
	w.stopTaking()
	return nil
}

// AwaitIdle blocks until every unit ended and the run function returned
// (nil), or ctx is done (ctx.Err()).
func (w *Worker) AwaitIdle(ctx context.Context) error {
	for _, ch := range []chan struct{}{w.drained, w.returned} {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// ForceClose cancels the units' context with cause ErrDrainTimeout (and stops
// taking work, if nothing did before) and returns how many units were still
// in flight. It does not wait for them: a unit that ignores its context is
// abandoned to the process's exit.
func (w *Worker) ForceClose() int {
	w.stopTaking()
	w.mu.Lock()
	n := w.inFlight
	w.mu.Unlock()
	w.cancelWork(ErrDrainTimeout)
	return int(n)
}

// InFlight reports the units in flight in InFlight.Work.
func (w *Worker) InFlight() lifecycle.InFlight {
	w.mu.Lock()
	defer w.mu.Unlock()
	return lifecycle.InFlight{Work: w.inFlight}
}

// Routed reports false: nothing routes work to a worker over the network
// (see lifecycle.Server), so a process that only runs workers and registers
// nowhere drains without a propagation window.
func (w *Worker) Routed() bool { return false }

var _ lifecycle.Server = (*Worker)(nil)
