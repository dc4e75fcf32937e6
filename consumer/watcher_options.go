package consumer

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/drainkit/drainkit/registry"
)

// WatcherOptions configure a Watcher. Only Source is required.
type WatcherOptions struct {
	// Source delivers the service's views: registry/consul's watch, a
	// Static list, or a user function (registry.SourceFunc). Required.
	Source registry.Source
	// Service names the service in logs and Status when the views do not.
	Service string
	// EmptyHold is how long a sudden empty list, after a non-empty one, is
	// held before it empties the candidate set: a registry that briefly
	// lists nothing (a deregistration storm, a lost agent state) does not
	// stop all traffic. A non-empty list arriving meanwhile ends the hold.
	// The first list, when empty, is delivered at once (authoritative).
	// 0 means 10s; negative means no hold.
	EmptyHold time.Duration
	// MaxStaleness is how long the source may fail (its last view carries
	// Err, or its Watch returned) before the watcher reports itself
	// Degraded; the last good view keeps serving meanwhile. 0 means 1m;
	// negative means never degraded.
	MaxStaleness time.Duration
	// MinBackoff and MaxBackoff bound the jittered exponential backoff
	// before a source whose Watch returned is restarted: the first wait is
	// about MinBackoff, doubling up to MaxBackoff; it resets when a Watch
	// lasted longer than MaxBackoff. 0 means 100ms and 10s.
	MinBackoff, MaxBackoff time.Duration
	// FullReadInterval is how often the Watcher reads the whole list again
	// alongside the watch, to correct a watch that missed an event (a lost
	// or once-only callback, a known failure of registry clients): a second
	// Watch call of Source, ended after its first view (within the interval,
	// at most 10s). Reconciled by revision: a full read with a lower
	// revision than the watch's view is older and ignored; one that lists
	// other instances, and that the watch does not catch up with within a
	// grace of a tenth of the interval (at most 1s), replaces the view,
	// logged and counted (WatchStatus.FullReadRepairs). Skipped for static
	// sources (views whose Source is "static"), before the first view and
	// while the source is failing. The Source must allow a second Watch
	// call alongside the first, as registry/consul's and registry/etcd's
	// do. 0 means 1m; negative disables full reads.
	FullReadInterval time.Duration
	// SnapshotPath, if set, is a file where the Watcher keeps the last good
	// view for a later run (opt-in): written atomically (a temporary file in
	// the same directory, synced, renamed) each time the watch delivers a
	// new non-empty view, and read once at start if the source fails before
	// its first view (a registry that is down when the process starts). The
	// snapshot then serves as the candidate view, marked as such in
	// WatchStatus (Snapshot, and Age its real age: now minus when its
	// evidence arrived in the earlier run), until the source's first
	// answer, which always replaces it whatever its revision. A snapshot
	// dated in the future (written under a clock that was ahead) counts as
	// 0 old when first read, as a future READY time does for slow start:
	// its real age is unknown, so it is served for at most MaxStaleness
	// from then, logged. A snapshot older than MaxStaleness is never
	// served: refused at start (Wait and requests fail at once with
	// ErrDegraded), and withdrawn when it grows older than that while the
	// source still fails. A missing or unusable file (another service's, a
	// bad format) is logged and ignored. Empty views are not written: the
	// file keeps the last list with instances.
	SnapshotPath string
	// Logger receives the watcher's events (empty list held or applied,
	// source errors and restarts, degraded). nil means slog.Default().
	Logger *slog.Logger
}

// Default values of WatcherOptions.
const (
	DefaultEmptyHold    = 10 * time.Second
	DefaultMaxStaleness = time.Minute
	DefaultMinBackoff   = 100 * time.Millisecond
	DefaultMaxBackoff   = 10 * time.Second

	DefaultFullReadInterval = time.Minute
)

func (o WatcherOptions) withDefaults() (WatcherOptions, error) {
	if o.Source == nil {
		return o, errors.New("consumer: WatcherOptions.Source is nil; want a registry.Source (consumer.Static, registry/consul, a registry.SourceFunc)")
	}
	if o.MinBackoff < 0 || o.MaxBackoff < 0 {
		return o, fmt.Errorf("consumer: WatcherOptions.MinBackoff %v / MaxBackoff %v: want >= 0", o.MinBackoff, o.MaxBackoff)
	}
	if o.EmptyHold == 0 {
		o.EmptyHold = DefaultEmptyHold
	}
	if o.MaxStaleness == 0 {
		o.MaxStaleness = DefaultMaxStaleness
	}
	if o.MinBackoff == 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.FullReadInterval == 0 {
		o.FullReadInterval = DefaultFullReadInterval
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}
