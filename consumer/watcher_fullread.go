package consumer

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/registry"
)

// Bounds of one full read (see WatcherOptions.FullReadInterval).
const (
	// maxFullReadTimeout caps how long one full read may wait for the
	// source's first answer (it is also at most the interval).
	maxFullReadTimeout = 10 * time.Second
	// maxFullReadGrace caps how long a difference the full read found is
	// left to the watch, which may be delivering it right now (it is also at
	// most a tenth of the interval).
	maxFullReadGrace = time.Second
)

// fullReads reads the whole list every FullReadInterval, alongside the
// watch, until ctx ends: the anti-entropy that corrects a watch which
// missed an event (a lost or once-only callback of a registry client).
func (w *Watcher) fullReads(ctx context.Context) {
	defer close(w.fullDone)
	tick := time.NewTicker(w.opts.FullReadInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if !w.fullReadDue() {
			continue
		}
		f, err := w.readAll(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			w.log.Debug("consumer: a full read failed; the watch's view stays", "service", w.opts.Service, "err", err)
			continue
		}
		w.reconcile(ctx, f)
	}
}

// fullReadDue reports whether a full read is worth making now: the watch
// delivered a view, from a source that can change (not "static"), and is
// not failing (its staleness already says the view may be wrong).
func (w *Watcher) fullReadDue() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.latestIn != 0 && w.latest.Source != staticSource && w.errSince.Load() == 0
}

// readAll reads the whole list once: the first successful view of a Watch
// call of its own, within the full read's timeout.
func (w *Watcher) readAll(ctx context.Context) (registry.View, error) {
	ctx, cancel := context.WithTimeout(ctx, min(w.opts.FullReadInterval, maxFullReadTimeout))
	defer cancel()
	var (
		got     registry.View
		ok      bool
		viewErr error
	)
	err := w.opts.Source.Watch(ctx, func(v registry.View) {
		switch {
		case ok:
		case v.Err != nil:
			viewErr = v.Err
		default:
			got, ok = v, true
			cancel()
		}
	})
	if ok {
		return got, nil
	}
	return registry.View{}, cmpOr(viewErr, cmpOr(err, errors.New("no view")))
}

// reconcile compares a full read with the watch's latest view. A difference
// is left to the watch for a short grace (it may be delivering the same
// change); if it is still there, the full read is applied as the newest
// view of the watch's order, logged and counted (WatchStatus.FullReadRepairs).
func (w *Watcher) reconcile(ctx context.Context, f registry.View) {
	w.mu.Lock()
	w.fullReadCount++
	call, differs := w.latestIn, w.differsLocked(f)
	w.mu.Unlock()
	if !differs || syncx.Sleep(ctx, min(w.opts.FullReadInterval/10, maxFullReadGrace)) != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.latestIn != call || !w.differsLocked(f) { // the watch caught up, or restarted
		return
	}
	w.fullReadRepairs++
	w.log.Warn("consumer: a full read found a difference the watch missed; applying the full read",
		"service", w.opts.Service, "source", f.Source, "revision", f.Revision,
		"watch_revision", w.latest.Revision, "watch_epoch", w.latest.Epoch,
		"added", idsNotIn(f.Instances, w.latest.Instances), "removed", idsNotIn(w.latest.Instances, f.Instances),
		"repairs", w.fullReadRepairs)
	f.Epoch = w.latest.Epoch // the registry's current revisions, which the watch orders by
	w.takeLocked(call, f, time.Now())
}

// differsLocked reports whether the full read f lists other instances than
// the latest view and is not older than it. Revisions of the same registry
// compare across Watch calls; one lower than the watch's is older, and a
// registry that restarted its revisions is the watch's to detect (with a
// new epoch).
func (w *Watcher) differsLocked(f registry.View) bool {
	l := w.latest
	if w.latestIn == 0 || f.Source != l.Source {
		return false
	}
	if f.Revision != 0 && l.Revision != 0 && f.Revision < l.Revision {
		return false
	}
	return !slices.EqualFunc(f.Instances, l.Instances, func(a, b registry.Instance) bool {
		return a.ID == b.ID && a.Address == b.Address && a.Port == b.Port &&
			slices.Equal(a.Tags, b.Tags) && maps.Equal(a.Meta, b.Meta)
	})
}

// idsNotIn lists the IDs of a that b lacks, for logs.
func idsNotIn(a, b []registry.Instance) []string {
	var ids []string
	for _, in := range a {
		if !slices.ContainsFunc(b, func(x registry.Instance) bool { return x.ID == in.ID }) {
			ids = append(ids, in.ID)
		}
	}
	return ids
}
