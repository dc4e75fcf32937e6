package consumer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/drainkit/drainkit/registry"
)

// snapshotFormat is the version of the snapshot file's layout.
const snapshotFormat = 1

// snapshotFile is what a Watcher writes to WatcherOptions.SnapshotPath: the
// last good view, with Received as the wall time its evidence arrived.
type snapshotFile struct {
	Format  int           `json:"format"`
	Written time.Time     `json:"written"`
	View    registry.View `json:"view"`
}

// snapState marks the candidate view as the snapshot read at start.
type snapState struct {
	path  string
	born  time.Duration // monoClock reading at which the snapshot's age was 0 (see snapshotAge)
	until time.Duration // monoClock reading at which it is older than MaxStaleness; 0: never
}

// expired reports whether the snapshot is older than MaxStaleness at now, a
// monoClock reading.
func (s *snapState) expired(now time.Duration) bool { return s.until != 0 && now >= s.until }

// age returns the snapshot's age at now, a monoClock reading.
func (s *snapState) age(now time.Duration) time.Duration { return now - s.born }

// snapshotAheadLogged is how far in the future a snapshot's received time
// must be before the Watcher logs the clock it was written under as ahead:
// less is ordinary skew.
const snapshotAheadLogged = time.Second

// snapshotAge turns a snapshot's received time (the wall clock of the run
// that wrote it) into its age at now, the time it is read (a time.Now()
// value): the one place where an earlier run's wall clock meets this one's.
// A received time in the future, which only a clock that was ahead when the
// file was written (or this one stepped back since) produces, says nothing
// of the evidence's real age; like a READY time in the future for slow
// start (rampStart), it counts as now: the snapshot is 0 old when this
// process first reads it, and so is served at most MaxStaleness from then,
// on the monotonic clock, never longer however far ahead its date. ahead is
// how far in the future it was (0 if it was not).
func snapshotAge(now, received time.Time) (age, ahead time.Duration) {
	age = now.Round(0).Sub(received) // wall against wall; saturates for absurd values
	if age < 0 {
		return 0, -age
	}
	return age, 0
}

// errSnapshot is the error of a request refused because the only view is a
// snapshot older than MaxStaleness.
func (w *Watcher) errSnapshot(path string, age time.Duration) error {
	return fmt.Errorf("%w: the source has not answered since start and the last-good snapshot %s is %v old, older than MaxStaleness %v",
		ErrDegraded, path, age.Round(time.Millisecond), w.opts.MaxStaleness)
}

// snapshotErr returns the error for a request while the watcher has only a
// snapshot older than MaxStaleness (served or refused at start); nil
// otherwise. One atomic load when no snapshot is involved.
func (w *Watcher) snapshotErr() error {
	s := w.snap.Load()
	if s == nil || !s.expired(w.clock.now()) {
		return nil
	}
	return w.errSnapshot(s.path, s.age(w.clock.now()))
}

// loadSnapshotLocked serves the snapshot at SnapshotPath as the candidate
// view: called once, when the source fails before its first view. A
// snapshot older than MaxStaleness is refused (Wait then fails at once);
// a missing or unreadable one is logged and ignored.
func (w *Watcher) loadSnapshotLocked(now time.Time, srcErr error) {
	path := w.opts.SnapshotPath
	if path == "" || w.snapTried || w.cur.Load() != nil {
		return
	}
	w.snapTried = true
	v, err := readSnapshot(path, w.opts.Service)
	if errors.Is(err, fs.ErrNotExist) {
		w.log.Warn("consumer: the source failed before its first view and there is no last-good snapshot yet",
			"service", w.opts.Service, "snapshot", path, "err", srcErr)
		return
	}
	if err != nil {
		w.log.Error("consumer: the last-good snapshot is unusable; ignoring it", "service", w.opts.Service, "snapshot", path, "err", err)
		return
	}
	age, ahead := snapshotAge(now, v.Received)
	if ahead > snapshotAheadLogged {
		w.log.Warn("consumer: the last-good snapshot is dated in the future (written under a clock that was ahead of this one); its age counts from now",
			"service", w.opts.Service, "snapshot", path, "received", v.Received, "ahead_ms", ahead.Milliseconds())
	}
	st := &snapState{path: path, born: w.clock.at(now) - age}
	if w.opts.MaxStaleness > 0 {
		if age > w.opts.MaxStaleness {
			st.until = time.Nanosecond
			w.snap.Store(st)
			close(w.refused)
			w.log.Error("consumer: the source failed before its first view and the last-good snapshot is older than the maximum staleness; refusing it",
				"service", w.opts.Service, "snapshot", path, "snapshot_age_ms", age.Milliseconds(),
				"max_staleness_ms", w.opts.MaxStaleness.Milliseconds(), "err", srcErr)
			return
		}
		st.until = w.clock.at(now) + w.opts.MaxStaleness - age
	}
	w.snap.Store(st)
	w.log.Warn("consumer: the source failed before its first view; serving the last-good snapshot until it answers",
		"service", w.opts.Service, "snapshot", path, "snapshot_age_ms", age.Milliseconds(),
		"instances", len(v.Instances), "revision", v.Revision, "source", v.Source,
		"max_staleness_ms", w.opts.MaxStaleness.Milliseconds(), "err", srcErr)
	w.publishLocked(v)
}

// readSnapshot reads and checks a snapshot file of service.
func readSnapshot(path, service string) (registry.View, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return registry.View{}, err
	}
	var f snapshotFile
	if err := json.Unmarshal(b, &f); err != nil {
		return registry.View{}, fmt.Errorf("%s: %w", path, err)
	}
	v := f.View
	switch {
	case f.Format != snapshotFormat:
		return v, fmt.Errorf("%s: format %d, want %d", path, f.Format, snapshotFormat)
	case service != "" && v.Service != service:
		return v, fmt.Errorf("%s: a snapshot of service %q, not %q", path, v.Service, service)
	case v.Received.IsZero() || len(v.Instances) == 0:
		return v, fmt.Errorf("%s: no received time or no instance", path)
	}
	return v, nil
}

// snapshots writes the candidate view to SnapshotPath each time the watch
// delivers a new non-empty one (latest wins), until ctx ends; a change
// pending then is written before it returns.
func (w *Watcher) snapshots(ctx context.Context) {
	defer close(w.snapDone)
	for {
		select {
		case <-w.snapDirty:
		case <-ctx.Done():
			select {
			case <-w.snapDirty:
			default:
				return
			}
		}
		if v := w.cur.Load(); v != nil && len(v.Instances) > 0 && w.snap.Load() == nil {
			if err := writeSnapshot(w.opts.SnapshotPath, *v); err != nil {
				w.log.Warn("consumer: writing the last-good snapshot failed", "service", w.opts.Service,
					"snapshot", w.opts.SnapshotPath, "err", err)
			}
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// writeSnapshot replaces the file at path with v atomically: a reader (the
// next run) sees the old file or the new one, never half of one.
func writeSnapshot(path string, v registry.View) error {
	b, err := json.MarshalIndent(snapshotFile{Format: snapshotFormat, Written: time.Now().UTC(), View: v}, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}
