package workdrain_test

import (
	"context"
	"os"
	"time"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/workdrain"
)

// A ticker drained with the service: each tick is one unit of work; at t0
// the loop stops ticking, a compaction already running finishes within
// drain.timeout, and its context is cancelled only if it outlives that.
func Example_ticker() {
	compact := func(ctx context.Context) error {
		// ... one bounded piece of work that honours ctx ...
		return ctx.Err()
	}
	w := workdrain.New(workdrain.AtDrainStart, func(ctx context.Context, w *workdrain.Worker) error {
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done(): // the drain: stop taking work
				return nil
			case <-t.C:
				_ = w.Do(compact)
			}
		}
	})
	os.Exit(drainkit.Main(drainkit.WithWorker("compactor", w)))
}
