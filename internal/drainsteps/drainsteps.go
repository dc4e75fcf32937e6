// Package drainsteps records, for tests, when each step of a lifecycle's
// drain happened by the wall clock.
package drainsteps

import (
	"sync"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
)

// Recorder is a lifecycle.Observer; pass it in lifecycle.Options.Observers.
type Recorder struct {
	mu sync.Mutex
	at map[string]time.Time
}

// New returns an empty Recorder.
func New() *Recorder { return &Recorder{at: map[string]time.Time{}} }

// OnTransition ignores transitions.
func (r *Recorder) OnTransition(lifecycle.Transition) {}

// OnDrainStep records when step s happened.
func (r *Recorder) OnDrainStep(_ lifecycle.Timeline, s lifecycle.Step) {
	r.mu.Lock()
	r.at[s.Name] = time.Now()
	r.mu.Unlock()
}

// Time returns when the named step happened, and whether it has.
func (r *Recorder) Time(name string) (time.Time, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.at[name]
	return t, ok
}
