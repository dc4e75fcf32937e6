// Command workerservice is the worker pod of internal/kubetest/k8sexample: a program on
// drainkit.Main with no service listener, only a workdrain.Worker (and the
// admin listener the probes and the preStop hook use). Every 200 ms it
// takes a unit of work that takes 1 s, honours its context and logs
// "worker: unit done" with the unit's number; at the drain it stops taking
// units and the one running finishes.
package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/workdrain"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	n := 0
	w := workdrain.New(workdrain.AtDrainStart, func(ctx context.Context, w *workdrain.Worker) error {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done(): // the drain: stop taking work
				return nil
			case <-t.C:
				n++
				unit := n
				_ = w.Do(func(ctx context.Context) error {
					select {
					case <-time.After(time.Second):
						logger.Info("worker: unit done", "unit", unit)
						return nil
					case <-ctx.Done():
						logger.Warn("worker: unit cut", "unit", unit)
						return ctx.Err()
					}
				})
			}
		}
	})
	os.Exit(drainkit.Main(drainkit.WithName("worker"), drainkit.WithLogger(logger), drainkit.WithWorker("units", w)))
}
