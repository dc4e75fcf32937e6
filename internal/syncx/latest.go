package syncx

import (
	"context"
	"errors"
	"sync"
)

// ErrStopped is returned by Latest.WaitFor when its stop channel closed
// before the condition held.
var ErrStopped = errors.New("syncx: stopped")

// Latest holds the most recent value published and lets readers wait for a
// newer one, latest wins: a reader that looks after two publications sees
// only the second, and a publisher never waits for readers (the pattern of
// grpc-go's health Watch). The zero value holds no value and is ready to use;
// methods are safe for concurrent use.
type Latest[T any] struct {
	mu      sync.Mutex
	v       T
	has     bool
	changed chan struct{} // closed and replaced on every Publish; nil until first needed
}

// Publish makes v the latest value and wakes every waiter.
func (l *Latest[T]) Publish(v T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.v, l.has = v, true
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// Load returns the latest value (ok is false before the first Publish) and a
// channel that is closed by the next Publish.
func (l *Latest[T]) Load() (v T, ok bool, changed <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed == nil {
		l.changed = make(chan struct{})
	}
	return l.v, l.has, l.changed
}

// WaitFor blocks until the latest value satisfies cond and returns it. It
// returns the latest value (the zero value if none) with ctx.Err() when ctx
// ends first, or with ErrStopped when stop closes first (a nil stop never
// does). It evaluates cond on the latest value after each Publish, so a
// value replaced before WaitFor looked is skipped. cond must not block.
func (l *Latest[T]) WaitFor(ctx context.Context, stop <-chan struct{}, cond func(T) bool) (T, error) {
	for {
		v, ok, changed := l.Load()
		if ok && cond(v) {
			return v, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return v, ctx.Err()
		case <-stop:
			return v, ErrStopped
		}
	}
}

// Offer sends v on c, a channel with a buffer of one, replacing an unread
// value: latest wins, and Offer never blocks. Only one goroutine may send on
// c (the caller), or the send could block.
func Offer[T any](c chan T, v T) {
	select {
	case <-c:
	default:
	}
	c <- v
}
