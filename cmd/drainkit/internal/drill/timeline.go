package drill

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
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
	// Steps maps step names (lifecycle.StepNotReady, ...) to offsets from
	// t0.
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

// parseStateTimeline reads the "timeline" member of a GET /state answer,
// a lifecycle.Timeline; ok is false when there is none (the drain has not
// started).
func parseStateTimeline(body []byte) (ReplicaTimeline, bool) {
	var st struct {
		Timeline *lifecycle.Timeline `json:"timeline"`
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
		LastLateArrival: t.LastLateArrival,
		InFlightAtClose: t.InFlightAtClose.Total(),
		ForceClosed:     int64(t.ForceClosed),
	}
	for _, s := range t.Steps {
		rt.Steps[s.Name] = s.Offset
		if s.Err != "" {
			rt.StepErrors[s.Name] = s.Err
		}
	}
	return rt, true
}

// parseLogTimeline reads a JSON log line that carries the lifecycle's
// timeline group under the key "timeline", as the exit line "drainkit: drain
// complete" does (lifecycle.Timeline.LogValue): counters, durations in whole
// milliseconds with "_ms" keys, each step as "<step>_ms" and a failed step's
// error as "<step>_error".
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
	rt.LastLateArrival = time.Duration(num("last_late_arrival_ms")) * time.Millisecond
	rt.InFlightAtClose = num("in_flight_at_close")
	rt.ForceClosed = num("force_closed_count")
	for k, raw := range m.Timeline {
		if k == "last_late_arrival_ms" {
			continue
		}
		if name, ok := strings.CutSuffix(k, "_ms"); ok {
			var n int64
			if json.Unmarshal(raw, &n) == nil {
				rt.Steps[name] = time.Duration(n) * time.Millisecond
			}
			continue
		}
		if name, ok := strings.CutSuffix(k, "_error"); ok {
			var e string
			if json.Unmarshal(raw, &e) == nil {
				rt.StepErrors[name] = e
			}
		}
	}
	return rt, true
}

// parseTransitionLine recognises the lifecycle's transition log line into
// state to and returns its time.
func parseTransitionLine(line []byte, to string) (time.Time, bool) {
	var m struct {
		Time time.Time `json:"time"`
		To   string    `json:"to"`
	}
	if err := json.Unmarshal(line, &m); err != nil || m.To != to || m.Time.IsZero() {
		return time.Time{}, false
	}
	return m.Time, true
}

// parseDrainingLine recognises the lifecycle's transition log line into
// DRAINING and returns its time, the drain's start t0.
func parseDrainingLine(line []byte) (time.Time, bool) {
	return parseTransitionLine(line, "DRAINING")
}
