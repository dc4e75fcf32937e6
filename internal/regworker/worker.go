package regworker

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
)

// Outcome is what the worker's step for Sync generation Gen returned.
type Outcome struct {
	Gen uint64
	Err error
}

// Worker is a registrar's one goroutine. The zero value is ready to use;
// a Worker must not be copied after first use.
type Worker struct {
	mu     sync.Mutex
	cancel context.CancelFunc // stops the goroutine; nil before it started
	done   chan struct{}      // closed when the goroutine returned
	kick   chan struct{}      // wakes it for a new Sync (buffer of one)

	outcome syncx.Latest[Outcome] // the last step's outcome, for Sync callers
}

// Kick starts the goroutine on the first call, running step at once when
// kicked and otherwise every period, counted from the start of the previous
// step; then it wakes the goroutine. A step's outcome is published to Await
// unless Stop cancelled the step (its Sync callers see done closed). Kick
// returns the goroutine's done channel.
func (w *Worker) Kick(period time.Duration, step func(context.Context) Outcome) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel == nil {
		ctx, cancel := context.WithCancel(context.Background())
		w.cancel, w.done, w.kick = cancel, make(chan struct{}), make(chan struct{}, 1)
		go w.run(ctx, period, step)
	}
	select {
	case w.kick <- struct{}{}:
	default:
	}
	return w.done
}

// run is the goroutine's loop. One step runs at a time.
func (w *Worker) run(ctx context.Context, period time.Duration, step func(context.Context) Outcome) {
	defer close(w.done)
	timer := time.NewTimer(period)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.kick:
		case <-timer.C:
		}
		start := time.Now()
		if o := step(ctx); ctx.Err() == nil {
			w.outcome.Publish(o)
		}
		timer.Reset(period - time.Since(start))
	}
}

// Await blocks until a step for generation gen or a later one published its
// outcome, and returns that outcome's error; ctx's error if ctx ends first;
// or stopped if done (the channel Kick returned) closes first.
func (w *Worker) Await(ctx context.Context, done <-chan struct{}, gen uint64, stopped error) error {
	o, err := w.outcome.WaitFor(ctx, done, func(o Outcome) bool { return o.Gen >= gen })
	switch {
	case errors.Is(err, syncx.ErrStopped):
		return stopped
	case err != nil:
		return err
	}
	return o.Err
}

// Stop cancels the goroutine and waits for it, or for ctx. It reports
// whether the goroutine has returned (or never ran).
func (w *Worker) Stop(ctx context.Context) bool {
	w.mu.Lock()
	cancel, done := w.cancel, w.done
	w.mu.Unlock()
	if cancel == nil {
		return true
	}
	cancel()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}
