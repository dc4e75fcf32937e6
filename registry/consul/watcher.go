package consul

import (
	"context"
	"errors"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/registry"
	"github.com/hashicorp/consul/api"
)

// ErrWatcherClosed is returned by Watcher.WaitFor after Close.
var ErrWatcherClosed = errors.New("consul: watcher closed")

// Watcher runs Watch in its own goroutine and keeps the latest view. C
// receives views, latest wins: it holds at most one, and a newer view
// replaces an unread one, so a slow reader never stalls the watch. C is
// closed after Close.
type Watcher struct {
	C <-chan registry.View

	c      chan registry.View
	cancel context.CancelFunc
	done   chan struct{}
	latest syncx.Latest[registry.View]
}

// NewWatcher starts watching service (see Watch for the rules). Call Close to
// stop it. It panics if client is nil or service is empty, which are
// programming errors.
func NewWatcher(client *api.Client, service string, opts WatchOptions) *Watcher {
	if client == nil || service == "" {
		panic("consul: NewWatcher needs a client and a service name")
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := make(chan registry.View, 1)
	w := &Watcher{C: c, c: c, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer close(c)
		_ = Watch(ctx, client, service, opts, w.offer)
	}()
	return w
}

func (w *Watcher) offer(v registry.View) {
	w.latest.Publish(v)
	syncx.Offer(w.c, v) // only the watch goroutine sends
}

// Latest returns the most recent view and whether there is one yet.
func (w *Watcher) Latest() (registry.View, bool) {
	v, ok, _ := w.latest.Load()
	return v, ok
}

// WaitFor blocks until the latest view satisfies cond and returns it, or
// returns the latest view and an error when ctx ends (ctx.Err()) or the
// watcher is closed (ErrWatcherClosed) first. It looks at the latest view
// after each delivery, so a view replaced before WaitFor saw it is skipped.
// cond must not block.
func (w *Watcher) WaitFor(ctx context.Context, cond func(registry.View) bool) (registry.View, error) {
	v, err := w.latest.WaitFor(ctx, w.done, cond)
	if errors.Is(err, syncx.ErrStopped) {
		err = ErrWatcherClosed
	}
	return v, err
}

// Close stops the watch, waits for its goroutine and closes C. It is
// idempotent.
func (w *Watcher) Close() {
	w.cancel()
	<-w.done
}
