package lifecycle

import (
	"log/slog"
	"time"
)

// Step names in a Timeline, in the order they normally occur.
const (
	StepNotReady        = "not_ready"        // t0: readiness fails, lame duck begins
	StepDeregistered    = "deregistered"     // all registrars returned from Deregister
	StepConfirmed       = "confirmed"        // the registry confirmed the instance is gone
	StepWindowEnded     = "window_ended"     // the propagation window ended
	StepListenersClosed = "listeners_closed" // servers stopped accepting
	StepIdle            = "idle"             // in-flight work reached zero
	StepForceClosed     = "force_closed"     // drain.timeout hit: the rest was cut
	StepStopHooksDone   = "stop_hooks_done"  // stop hooks returned
)

// Step is one entry of a Timeline. Offset is measured from the drain's start.
// Err is set when the step failed or timed out (e.g. deregistration).
type Step struct {
	Name   string        `json:"name"`
	Offset time.Duration `json:"offset_ns"`
	Err    string        `json:"error,omitempty"`
}

// Timeline records one drain (DESIGN.md section 4).
type Timeline struct {
	Start  time.Time `json:"start"` // t0
	Reason string    `json:"reason"`
	Steps  []Step    `json:"steps"`
	// LateArrivals counts requests that arrived after t0; LastLateArrival is
	// the offset of the last one (0 if none).
	LateArrivals    int64         `json:"late_arrivals"`
	LastLateArrival time.Duration `json:"last_late_arrival_ns"`
	// InFlightAtClose is the work in progress when the listeners closed.
	InFlightAtClose InFlight `json:"in_flight_at_close"`
	// ForceClosed counts requests, calls, streams, connections and units of
	// background work cut at the drain timeout; non-zero makes Run exit with
	// code 1.
	ForceClosed int `json:"force_closed"`
	// CancelledEarly counts requests, calls and streams whose context was
	// cancelled while they ran by something other than
	// their client or the drain deadline (for instance an application
	// context cancelled on SIGTERM that reached them through a server hook);
	// servers report each with Lifecycle.CancelledEarly. Their clients most
	// likely saw errors although nothing was force-closed.
	CancelledEarly int64 `json:"cancelled_early"`
}

// Offset returns the offset of the named step and whether it was recorded.
func (t Timeline) Offset(name string) (time.Duration, bool) {
	for _, s := range t.Steps {
		if s.Name == name {
			return s.Offset, true
		}
	}
	return 0, false
}

func (t Timeline) clone() Timeline {
	t.Steps = append([]Step(nil), t.Steps...)
	return t
}

// LogValue renders the timeline as one structured log group. Durations
// follow the logs' convention (DESIGN.md section 7): whole milliseconds, the
// unit in the key. Each step is "<step>_ms" (its offset from t0), and a
// failed step adds "<step>_error".
func (t Timeline) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.Time("start", t.Start),
		slog.String("reason", t.Reason),
		slog.Int64("late_arrivals", t.LateArrivals),
		slog.Int64("last_late_arrival_ms", t.LastLateArrival.Milliseconds()),
		slog.Int64("in_flight_at_close", t.InFlightAtClose.Total()),
		slog.Int("force_closed_count", t.ForceClosed), // the step is "force_closed"
		slog.Int64("cancelled_early", t.CancelledEarly),
	}
	for _, s := range t.Steps {
		attrs = append(attrs, slog.Int64(s.Name+"_ms", s.Offset.Milliseconds()))
		if s.Err != "" {
			attrs = append(attrs, slog.String(s.Name+"_error", s.Err))
		}
	}
	return slog.GroupValue(attrs...)
}
