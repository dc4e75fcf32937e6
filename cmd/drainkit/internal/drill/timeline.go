package drill

import (
	"encoding/json"
	"time"
)

// ReplicaTimeline is what a replica reported about its own drain: the
// lifecycle's drain timeline (offsets from the drain's start t0), read from
// its final JSON log line on stderr or, for binaries that do not log JSON,
// from the last GET /state answered before it exited.
type ReplicaTimeline struct {
	// Source says where it came from: "log" or "state".
	Source string
	// T0 is the drain's start when the replica reported it (the DRAINING
	// transition's log time or Timeline.Start); zero if unknown.
	T0 time.Time
	// Steps maps step names (lifecycle.Step* names such as "not_ready",
	// "deregistered", "window_ended", "listeners_closed") to offsets from t0.
	Steps map[string]time.Duration
	// StepErrors maps step names to their error text, when a step failed.
	StepErrors map[string]string
	// LateArrivals counts requests that arrived after t0; LastLateArrival is
	// the offset of the last one (0 if none).
	LateArrivals    int64
	LastLateArrival time.Duration
	InFlightAtClose int64
	ForceClosed     int64
}

// stateTimeline is lifecycle.Timeline's JSON shape in GET /state.
type stateTimeline struct {
	Start time.Time `json:"start"`
	Steps []struct {
		Name   string `json:"name"`
		Offset int64  `json:"offset_ns"`
		Err    string `json:"error"`
	} `json:"steps"`
	LateArrivals    int64 `json:"late_arrivals"`
	LastLateArrival int64 `json:"last_late_arrival_ns"`
	InFlightAtClose struct {
		Requests, Calls, Streams, Hijacked int64
	} `json:"in_flight_at_close"`
	ForceClosed int64 `json:"force_closed"`
}

// parseStateTimeline reads the "timeline" member of a GET /state answer; ok
// is false when there is none (the drain has not started).
func parseStateTimeline(body []byte) (ReplicaTimeline, bool) {
	var st struct {
		Timeline *stateTimeline `json:"timeline"`
	}
	if err := json.Unmarshal(body, &st); err != nil || st.Timeline == nil {
		return ReplicaTimeline{}, false
	}
	t := st.Timeline
	rt := ReplicaTimeline{
		Source:          "state",
		T0:              t.Start,
		Steps:           map[string]time.Duration{},
		StepErrors:      map[string]string{},
		LateArrivals:    t.LateArrivals,
		LastLateArrival: time.Duration(t.LastLateArrival),
		InFlightAtClose: t.InFlightAtClose.Requests + t.InFlightAtClose.Calls + t.InFlightAtClose.Streams + t.InFlightAtClose.Hijacked,
		ForceClosed:     t.ForceClosed,
	}
	for _, s := range t.Steps {
		rt.Steps[s.Name] = time.Duration(s.Offset)
		if s.Err != "" {
			rt.StepErrors[s.Name] = s.Err
		}
	}
	return rt, true
}

// logCounters are the timeline group's non-step members in the exit log line
// (lifecycle.Timeline.LogValue).
var logCounters = map[string]bool{
	"start": true, "reason": true, "late_arrivals": true, "last_late_arrival": true,
	"in_flight_at_close": true, "force_closed_count": true,
}

// parseLogTimeline reads a JSON log line (log/slog's JSONHandler, durations
// in nanoseconds) that carries the lifecycle's timeline group under the key
// "timeline", as the exit line "drainkit: drain complete" does.
func parseLogTimeline(line []byte) (ReplicaTimeline, bool) {
	var m struct {
		Timeline map[string]json.RawMessage `json:"timeline"`
	}
	if err := json.Unmarshal(line, &m); err != nil || m.Timeline == nil {
		return ReplicaTimeline{}, false
	}
	rt := ReplicaTimeline{Source: "log", Steps: map[string]time.Duration{}, StepErrors: map[string]string{}}
	num := func(k string) int64 {
		var n int64
		_ = json.Unmarshal(m.Timeline[k], &n)
		return n
	}
	var start time.Time
	if json.Unmarshal(m.Timeline["start"], &start) == nil {
		rt.T0 = start
	}
	rt.LateArrivals = num("late_arrivals")
	rt.LastLateArrival = time.Duration(num("last_late_arrival"))
	rt.InFlightAtClose = num("in_flight_at_close")
	rt.ForceClosed = num("force_closed_count")
	for k, raw := range m.Timeline {
		if logCounters[k] {
			continue
		}
		var n int64
		if json.Unmarshal(raw, &n) == nil {
			rt.Steps[k] = time.Duration(n)
			continue
		}
		var failed struct {
			At    int64  `json:"at"`
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &failed) == nil {
			rt.Steps[k] = time.Duration(failed.At)
			rt.StepErrors[k] = failed.Error
		}
	}
	return rt, true
}

// parseDrainingLine recognises the lifecycle's transition log line into
// DRAINING and returns its time, the drain's start t0.
func parseDrainingLine(line []byte) (time.Time, bool) {
	var m struct {
		Time time.Time `json:"time"`
		To   string    `json:"to"`
	}
	if err := json.Unmarshal(line, &m); err != nil || m.To != "DRAINING" || m.Time.IsZero() {
		return time.Time{}, false
	}
	return m.Time, true
}
