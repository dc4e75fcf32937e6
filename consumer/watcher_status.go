package consumer

import (
	"time"
)

// WatchStatus's fields look like registry.Status's: the consumer's view of a
// watch, not a registrar's write record; they share only the field names.
// WatchStatus is a snapshot of a Watcher. In JSON, durations are integer
// nanoseconds under keys ending in _ns, as in lifecycle's Timeline.
type WatchStatus struct {
	// Service is the service name.
	Service string `json:"service"`
	// Source, Epoch, Revision and Received are the candidate view's.
	Source   string    `json:"source"`
	Epoch    uint64    `json:"epoch"`
	Revision uint64    `json:"revision"`
	Received time.Time `json:"received"`
	// Snapshot is the path of the last-good snapshot while the candidate
	// view is that snapshot, read at start because the source had not
	// answered (WatcherOptions.SnapshotPath); Age is then its real age,
	// counted from when this process first read it if the snapshot is
	// dated in the future (never negative).
	Snapshot string `json:"snapshot,omitempty"`
	// Instances is the number of candidate instances.
	Instances int `json:"instances"`
	// Age is how old the candidate view's evidence is (now - Received).
	Age time.Duration `json:"age_ns"`
	// Staleness is how long the source has been failing (its last view
	// carries an error, or its Watch returned), on this process's monotonic
	// clock; 0 while it is healthy.
	Staleness time.Duration `json:"staleness_ns"`
	// Degraded is Staleness > MaxStaleness.
	Degraded bool `json:"degraded"`
	// Err is the source's last error while it is failing.
	Err error `json:"-"`
	// EmptyHeld is how long an empty list has been held back; 0 if none is.
	EmptyHeld time.Duration `json:"empty_held_ns"`
	// Restarts counts the source's Watch restarts; Dropped counts views
	// dropped as older than the current one.
	Restarts uint64 `json:"restarts"`
	Dropped  uint64 `json:"dropped"`
	// FullReads counts the full reads answered (WatcherOptions.FullReadInterval);
	// FullReadRepairs the differences only a full read found, and applied.
	FullReads       uint64 `json:"full_reads"`
	FullReadRepairs uint64 `json:"full_read_repairs"`
}

// Status returns a snapshot of the watcher's view and health.
func (w *Watcher) Status() WatchStatus {
	now := time.Now()
	v := w.View()
	s := WatchStatus{
		Service: v.Service, Source: v.Source, Epoch: v.Epoch, Revision: v.Revision, Received: v.Received,
		Instances: len(v.Instances), Age: v.Age(now),
	}
	s.Staleness = w.staleness()
	s.Degraded = w.Degraded()
	if st := w.snap.Load(); st != nil && w.cur.Load() != nil {
		s.Snapshot, s.Age = st.path, st.age(w.clock.now())
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	s.Err, s.Restarts, s.Dropped = w.lastErr, w.restarts, w.dropped
	s.FullReads, s.FullReadRepairs = w.fullReadCount, w.fullReadRepairs
	if w.held != nil {
		s.EmptyHeld = now.Sub(w.heldSince)
	}
	return s
}
