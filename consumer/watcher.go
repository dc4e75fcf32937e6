package consumer

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/registry"
)

// Watcher keeps one service's candidate view, fed by a registry.Source, and
// treats it as evidence with an age rather than the truth:
//
//   - the view swaps atomically (View never sees half an update), and
//     subscribers get every swap in order;
//   - an older view never replaces a newer one of the same Watch call, in
//     the order registry.View.OlderThan defines: by Epoch, which a source
//     increments when its registry's revision went backwards (a Consul
//     agent that lost its state), then by Revision (Revision 0 views by
//     Received). A source error changes nothing in this order; the first
//     view of a restarted Watch call starts a new one;
//   - a source error keeps the last good view; Status reports its age and
//     how long the source has been failing (Staleness, measured on this
//     process's monotonic clock, so a step of the wall clock neither
//     shortens nor lengthens it), and past MaxStaleness the watcher reports
//     itself Degraded;
//   - an empty list is delivered at once when it is the first, but one
//     following a non-empty list is held for EmptyHold (logged) before it
//     empties the candidate set;
//   - a source whose Watch returns is restarted after a jittered,
//     exponentially growing backoff;
//   - every FullReadInterval, a full read (the first view of a second,
//     short Watch call) is compared with the watch's view: a difference the
//     watch does not deliver itself within a short grace is applied, logged
//     and counted (WatchStatus.FullReadRepairs).
//
// A Watcher never writes to the registry. Its methods are safe for
// concurrent use.
type Watcher struct {
	opts     WatcherOptions
	log      *slog.Logger
	cur      atomic.Pointer[registry.View] // candidate view; nil before the first
	clock    monoClock                     // origin of errSince
	errSince atomic.Int64                  // clock reading when the source began failing; 0 while healthy
	ready    chan struct{}                 // closed at the first candidate view
	cancel   context.CancelFunc
	done     chan struct{} // closed when run returned
	fullDone chan struct{} // closed when fullReads returned (at once without full reads)
	snapDone chan struct{} // closed when snapshots returned (at once without SnapshotPath)

	snap      atomic.Pointer[snapState] // non-nil while the candidate view is the snapshot read at start, or it was refused
	refused   chan struct{}             // closed when the snapshot was refused (older than MaxStaleness)
	snapDirty chan struct{}             // a new view to write to SnapshotPath (capacity 1)
	stopOnce  sync.Once

	mu        sync.Mutex // guards the fields below; subscribers run with it held
	latest    registry.View
	calls     uint64 // Watch calls started so far
	latestIn  uint64 // the Watch call that delivered latest; 0 before any
	lastErr   error
	held      *time.Timer // non-nil while an empty list is held
	heldSince time.Time
	holdGen   uint64
	degradedT *time.Timer // logs the start of Degraded
	subs      map[uint64]func(registry.View)
	nextSub   uint64
	restarts  uint64
	dropped   uint64

	snapTried       bool   // the snapshot was read (once, at the first failure before a view)
	fullReadCount   uint64 // full reads answered
	fullReadRepairs uint64 // differences only a full read found
}

// NewWatcher checks opts and starts watching opts.Source in a goroutine
// that runs until Close. It returns an error naming the field when opts is
// unusable; it does not wait for a first view (see Wait).
func NewWatcher(opts WatcherOptions) (*Watcher, error) {
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &Watcher{
		opts: opts, log: opts.Logger, ready: make(chan struct{}), clock: newMonoClock(),
		cancel: cancel, done: make(chan struct{}), fullDone: make(chan struct{}), snapDone: make(chan struct{}),
		refused: make(chan struct{}), snapDirty: make(chan struct{}, 1),
		latest: registry.View{Service: opts.Service},
		subs:   map[uint64]func(registry.View){},
	}
	go w.run(ctx)
	if opts.FullReadInterval > 0 {
		go w.fullReads(ctx)
	} else {
		close(w.fullDone)
	}
	if opts.SnapshotPath != "" {
		go w.snapshots(ctx)
	} else {
		close(w.snapDone)
	}
	return w, nil
}

// Close stops the source's Watch and waits for it to return. It is
// idempotent; the last view stays readable.
func (w *Watcher) Close() error {
	w.stopOnce.Do(func() {
		w.cancel()
		<-w.done
		<-w.fullDone
		<-w.snapDone
		w.mu.Lock()
		defer w.mu.Unlock()
		stopTimer(w.held)
		stopTimer(w.degradedT)
		w.held, w.degradedT = nil, nil
	})
	return nil
}

// Wait blocks until the first candidate view arrived or ctx is done. With a
// SnapshotPath, it fails at once (ErrDegraded) while the source has not
// answered and the snapshot was refused as older than MaxStaleness.
func (w *Watcher) Wait(ctx context.Context) error {
	select {
	case <-w.ready:
		return nil
	default:
	}
	select {
	case <-w.ready:
		return nil
	case <-w.refused:
		if err := w.snapshotErr(); err != nil {
			return fmt.Errorf("consumer: no view of %q: %w", w.opts.Service, err)
		}
		return w.Wait(ctx) // a live view arrived meanwhile
	case <-ctx.Done():
		return fmt.Errorf("consumer: waiting for a first view of %q: %w", w.opts.Service, ctx.Err())
	}
}

// View returns the candidate view: the instances consumers pick from. Before
// the first view it is the zero View with Service set.
func (w *Watcher) View() registry.View {
	if v := w.cur.Load(); v != nil {
		return *v
	}
	return registry.View{Service: w.opts.Service}
}

// Subscribe calls fn with the current candidate view, if there is one, and
// then with every later one, in order, one call at a time; fn must return
// quickly and must not call Subscribe or its stop function. stop ends the
// subscription; after it returns fn is not called again.
func (w *Watcher) Subscribe(fn func(registry.View)) (stop func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	id := w.nextSub
	w.nextSub++
	w.subs[id] = fn
	if v := w.cur.Load(); v != nil {
		fn(*v)
	}
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.subs, id)
	}
}

// Degraded reports whether the source has been failing for longer than
// MaxStaleness, or the only view is a snapshot older than MaxStaleness.
func (w *Watcher) Degraded() bool { return w.degraded(w.staleness()) || w.snapshotErr() != nil }

// degraded reports whether a source failing for staleness is degraded.
func (w *Watcher) degraded(staleness time.Duration) bool {
	return w.opts.MaxStaleness > 0 && staleness > w.opts.MaxStaleness
}

// staleness returns how long the source has been failing; 0 while it is
// healthy. It reads only the monotonic clock and one atomic: FailFast asks
// it on every request.
func (w *Watcher) staleness() time.Duration {
	since := w.errSince.Load()
	if since == 0 {
		return 0
	}
	return w.clock.now() - time.Duration(since)
}

// run watches the source, restarting it with backoff whenever Watch
// returns, until ctx ends.
func (w *Watcher) run(ctx context.Context) {
	defer close(w.done)
	bo := syncx.Backoff{Min: w.opts.MinBackoff, Max: w.opts.MaxBackoff}
	for {
		start := time.Now()
		w.mu.Lock()
		w.calls++
		call := w.calls
		w.mu.Unlock()
		err := w.opts.Source.Watch(ctx, func(v registry.View) { w.receive(call, v) })
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > w.opts.MaxBackoff {
			bo.Reset()
		}
		wait := bo.Next()
		w.sourceEnded(err, wait)
		if syncx.Sleep(ctx, wait) != nil {
			return
		}
	}
}

func stopTimer(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}
