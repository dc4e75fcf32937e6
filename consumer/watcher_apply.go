package consumer

import (
	"fmt"
	"time"

	"github.com/drainkit/drainkit/registry"
)

// receive is the source's callback for Watch call number call: it orders,
// holds or applies v.
func (w *Watcher) receive(call uint64, v registry.View) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if v.Err != nil {
		w.failedLocked(v.Err, now)
		return
	}
	w.recoveredLocked(now)
	if w.olderLocked(call, v) {
		w.dropped++
		w.log.Debug("consumer: dropped a view older than the current one", "service", w.opts.Service,
			"epoch", v.Epoch, "revision", v.Revision, "current_epoch", w.latest.Epoch,
			"current_revision", w.latest.Revision, "source", v.Source)
		return
	}
	w.takeLocked(call, v, now)
}

// takeLocked makes v, from Watch call number call and not older than the
// latest view, the latest: applied, or held when it is a sudden empty list.
func (w *Watcher) takeLocked(call uint64, v registry.View, now time.Time) {
	if w.latestIn == call && v.Epoch > w.latest.Epoch {
		w.log.Info("consumer: the source's revisions started again (a new epoch); taking its views in the new order",
			"service", w.opts.Service, "source", v.Source, "epoch", v.Epoch, "revision", v.Revision,
			"previous_epoch", w.latest.Epoch, "previous_revision", w.latest.Revision)
	}
	if v.Service == "" {
		v.Service = w.opts.Service
	}
	if v.Received.IsZero() {
		v.Received = now
	}
	if v.Instances == nil {
		v.Instances = []registry.Instance{}
	}
	w.latest, w.latestIn = v, call
	if cur := w.cur.Load(); len(v.Instances) == 0 && cur != nil && len(cur.Instances) > 0 && w.opts.EmptyHold > 0 && w.snap.Load() == nil {
		w.holdLocked(now, len(cur.Instances))
		return
	}
	w.endHoldLocked(now)
	w.publishLocked(v)
	if s := w.snap.Load(); s != nil { // after publishing: Wait then finds the view ready
		w.snap.Store(nil)
		w.log.Info("consumer: the source answered; its view replaces the last-good snapshot",
			"service", w.opts.Service, "snapshot", s.path, "instances", len(v.Instances), "revision", v.Revision)
	}
	if w.opts.SnapshotPath != "" && len(v.Instances) > 0 {
		select {
		case w.snapDirty <- struct{}{}:
		default: // a write is pending; it reads the latest view
		}
	}
}

// olderLocked reports whether v, from Watch call number call, is older than
// the latest view: only views of the same Watch call and source are ordered
// (registry.View.OlderThan); a restarted Watch starts a new order.
func (w *Watcher) olderLocked(call uint64, v registry.View) bool {
	return call == w.latestIn && v.Source == w.latest.Source && v.OlderThan(w.latest)
}

// holdLocked starts holding an empty list, unless one is held already.
func (w *Watcher) holdLocked(now time.Time, had int) {
	if w.held != nil {
		return
	}
	w.holdGen++
	gen := w.holdGen
	w.heldSince = now
	w.held = time.AfterFunc(w.opts.EmptyHold, func() { w.releaseHold(gen) })
	w.log.Warn("consumer: the registry lists no instance after a non-empty list; holding the last non-empty view",
		"service", w.opts.Service, "hold_ms", w.opts.EmptyHold.Milliseconds(), "instances_kept", had,
		"revision", w.latest.Revision, "source", w.latest.Source)
}

// releaseHold applies the held empty list when the hold expires.
func (w *Watcher) releaseHold(gen uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held == nil || gen != w.holdGen {
		return
	}
	w.held = nil
	w.log.Warn("consumer: the registry still lists no instance after the hold; emptying the candidate set",
		"service", w.opts.Service, "held_ms", time.Since(w.heldSince).Milliseconds())
	w.publishLocked(w.latest)
}

// endHoldLocked ends a hold because a non-empty list arrived.
func (w *Watcher) endHoldLocked(now time.Time) {
	if w.held == nil {
		return
	}
	w.held.Stop()
	w.held = nil
	w.log.Info("consumer: the registry lists instances again within the empty-list hold",
		"service", w.opts.Service, "held_ms", now.Sub(w.heldSince).Milliseconds())
}

func (w *Watcher) publishLocked(v registry.View) {
	first := w.cur.Load() == nil
	w.cur.Store(&v)
	for _, fn := range w.subs {
		fn(v)
	}
	if first { // after the subscribers: Wait means they have the view
		close(w.ready)
	}
}

// failedLocked records a source error noticed at now (a time.Now() value):
// the last good view stays, and so does the order of the Watch call's views
// (a source that restarts its revisions says so with a new Epoch). The
// staleness starts at now on the monotonic clock; the view's ErrAt, a wall
// time, is only reported.
func (w *Watcher) failedLocked(err error, now time.Time) {
	w.lastErr = err
	if w.errSince.Load() != 0 {
		return
	}
	w.errSince.Store(int64(w.clock.at(now)))
	w.loadSnapshotLocked(now, err)
	if w.cur.Load() == nil {
		w.log.Warn("consumer: the service's source failed before its first view; no instance to call yet",
			"service", w.opts.Service, "err", err, "max_staleness_ms", w.opts.MaxStaleness.Milliseconds())
	} else {
		w.log.Warn("consumer: the service's source failed; keeping the last good view",
			"service", w.opts.Service, "source", w.latest.Source, "err", err,
			"view_age_ms", w.latest.Age(now).Milliseconds(), "max_staleness_ms", w.opts.MaxStaleness.Milliseconds())
	}
	if w.opts.MaxStaleness > 0 {
		w.degradedT = time.AfterFunc(w.opts.MaxStaleness, w.logDegraded)
	}
}

func (w *Watcher) logDegraded() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.errSince.Load() == 0 {
		return
	}
	w.log.Error("consumer: degraded: the service's source has failed for longer than the maximum staleness",
		"service", w.opts.Service, "max_staleness_ms", w.opts.MaxStaleness.Milliseconds(), "err", w.lastErr)
}

func (w *Watcher) recoveredLocked(now time.Time) {
	since := w.errSince.Load()
	if since == 0 {
		return
	}
	failedFor := w.clock.at(now) - time.Duration(since)
	w.errSince.Store(0)
	w.lastErr = nil
	stopTimer(w.degradedT)
	w.degradedT = nil
	w.log.Info("consumer: the service's source recovered", "service", w.opts.Service,
		"failed_for_ms", failedFor.Milliseconds())
}

// sourceEnded records a Watch that returned: it counts as a source error
// until the restarted Watch delivers a view, whose order starts afresh.
func (w *Watcher) sourceEnded(err error, wait time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.restarts++
	w.log.Warn("consumer: the service's source stopped watching; restarting it",
		"service", w.opts.Service, "err", err, "backoff_ms", wait.Milliseconds(), "restarts", w.restarts)
	w.failedLocked(fmt.Errorf("consumer: source Watch returned: %w", err), time.Now())
}
