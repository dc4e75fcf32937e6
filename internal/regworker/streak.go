package regworker

import (
	"log/slog"
	"time"

	"github.com/drainkit/drainkit/registry"
)

// Streak records the outcome of registry calls in a registry.Status and logs
// failure streaks: the first failure at Warn, later ones at Debug, the first
// success after a failure at Info. A streak lasts while Status.LastError is
// set. The caller holds the lock guarding the Status.
type Streak struct {
	Log       *slog.Logger
	Failing   string // the Warn message of a streak's first failure
	Again     string // the Debug message of its later failures
	Recovered string // the Info message of its end
}

// Wrote records a successful write at now, then applies update (if not nil).
func (s Streak) Wrote(st *registry.Status, update func(*registry.Status)) {
	if st.LastError != "" {
		s.Log.Info(s.Recovered)
	}
	st.LastWrite = time.Now()
	st.LastError = ""
	if update != nil {
		update(st)
	}
}

// Failed records a failed call, op naming it.
func (s Streak) Failed(st *registry.Status, op string, err error) {
	streak := st.LastError != ""
	st.LastError, st.LastErrorAt = op+": "+err.Error(), time.Now()
	if !streak {
		s.Log.Warn(s.Failing, "op", op, "error", err)
	} else {
		s.Log.Debug(s.Again, "op", op, "error", err)
	}
}
