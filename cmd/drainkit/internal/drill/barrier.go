package drill

import (
	"context"
	"sync"
)

// barrier lets the strategy runs of one drill start and stop their load
// together, so that every strategy is measured over the same span of time.
// Each of n parties arrives once; wait returns when all have arrived.
type barrier struct {
	mu   sync.Mutex
	left int
	all  chan struct{}
}

func newBarrier(n int) *barrier {
	b := &barrier{left: n, all: make(chan struct{})}
	if n <= 0 {
		close(b.all)
	}
	return b
}

// party returns the arrival of one party: calling it more than once counts
// once (a run that fails arrives from its deferred cleanup, so that it never
// holds the others up).
func (b *barrier) party() func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			b.left--
			if b.left == 0 {
				close(b.all)
			}
		})
	}
}

// wait blocks until every party arrived (nil) or ctx ends (ctx.Err()).
func (b *barrier) wait(ctx context.Context) error {
	select {
	case <-b.all:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
