package regworker

import (
	"context"
	"errors"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
)

// Backoff bounds between deregistration attempts and between failed
// confirmation queries.
const (
	RetryMin = 50 * time.Millisecond
	RetryMax = time.Second
	// LastAttemptMargin is left before the deadline for a final attempt.
	LastAttemptMargin = 20 * time.Millisecond
)

// NewBackoff returns the backoff between failed registry calls: jittered,
// RetryMin doubling to RetryMax.
func NewBackoff() syncx.Backoff { return syncx.Backoff{Min: RetryMin, Max: RetryMax} }

// Retry calls attempt until it returns nil or ctx ends, waiting NewBackoff's
// waits in between, and keeping a last attempt LastAttemptMargin before
// ctx's deadline rather than giving up early. It returns the number of
// attempts and, on failure, the last error joined with ctx's.
func Retry(ctx context.Context, attempt func() error) (int, error) {
	bo := NewBackoff()
	for n := 1; ; n++ {
		err := attempt()
		if err == nil {
			return n, nil
		}
		wait := bo.Next()
		if dl, ok := ctx.Deadline(); ok {
			left := time.Until(dl) - LastAttemptMargin
			if left <= 0 {
				return n, errors.Join(err, context.DeadlineExceeded)
			}
			wait = min(wait, left)
		}
		if serr := syncx.Sleep(ctx, wait); serr != nil {
			return n, errors.Join(err, serr)
		}
	}
}
