package syncx

import (
	"context"
	"time"
)

// Sleep waits d, or until ctx is done. It returns nil after d, and ctx.Err()
// if ctx ended first (or was already done); a d <= 0 returns ctx.Err() at
// once. Its timer is stopped on return.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
