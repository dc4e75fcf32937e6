package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// locked returns a copy of the list *s (hooks, checkers), taken under l.mu:
// they are added before Run and read by it.
func locked[T any](l *Lifecycle, s *[]T) []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(*s)
}

// runWarmupHooks runs the warm-up hooks in order within warmup.timeout. A
// drain request cancels it; a hook that ignores cancellation is abandoned.
func (l *Lifecycle) runWarmupHooks(ctx context.Context) error {
	hooks := locked(l, &l.warmups)
	ctx, cancel := context.WithTimeout(ctx, l.opts.Timings.WarmupTimeout)
	defer cancel()
	go func() {
		select {
		case <-l.phase.Done(phaseDraining):
			cancel()
		case <-ctx.Done():
		}
	}()
	for _, h := range hooks {
		if err := l.callBounded(ctx, h.name, "warm-up hook", h.fn); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("warm-up hook %s: warmup.timeout %s exceeded: %w", h.name, l.opts.Timings.WarmupTimeout, err)
			}
			return fmt.Errorf("warm-up hook %s: %w", h.name, err)
		}
	}
	return nil
}

// runStopHooks runs the stop hooks in reverse order, together bounded by
// stop.timeout and by the grace period.
func (l *Lifecycle) runStopHooks(graceEnd time.Time) {
	hooks := locked(l, &l.stops)
	if len(hooks) == 0 {
		return
	}
	deadline := time.Now().Add(l.opts.Timings.StopTimeout)
	if graceEnd.Before(deadline) && graceEnd.After(time.Now()) {
		deadline = graceEnd
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	for i := len(hooks) - 1; i >= 0; i-- {
		h := hooks[i]
		if err := l.callBounded(ctx, h.name, "stop hook", h.fn); err != nil && !errors.Is(err, errAbandoned) {
			l.opts.Logger.Warn("drainkit: stop hook failed", "hook", h.name, "error", err)
		}
	}
}
