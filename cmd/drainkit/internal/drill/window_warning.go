package drill

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// windowWarningText is what the lifecycle's warning of a propagation
// window cut at propagation.max while consumers still sent says
// (lifecycle's warnOverrun); the drill recognises the replicas' log line
// by it.
const windowWarningText = "the propagation window ended at propagation.max while consumers were still sending"

// WindowWarning is a replica's warning that its propagation window ended
// at propagation.max while consumers still sent: the callers it named and
// the settings it asked for (issue 32). Durations carry their unit.
type WindowWarning struct {
	Replica int `json:"replica"`
	// Callers are the callers still due, as the replica named them (IP,
	// identity, usual gap, last request); CallersDue how many.
	Callers    string `json:"callers,omitempty"`
	CallersDue int    `json:"callers_due"`
	// PropagationMaxAtLeastMs, GracePeriodAtLeastMs and
	// TerminationGracePeriodAtLeastS are the figures it advised (0 when it
	// named no caller).
	PropagationMaxAtLeastMs        int64 `json:"propagation_max_at_least_ms,omitempty"`
	GracePeriodAtLeastMs           int64 `json:"grace_period_at_least_ms,omitempty"`
	TerminationGracePeriodAtLeastS int64 `json:"termination_grace_period_at_least_s,omitempty"`
}

// parseWindowWarning recognises the warning's JSON log line.
func parseWindowWarning(line []byte) (WindowWarning, bool) {
	if !bytes.Contains(line, []byte(windowWarningText)) {
		return WindowWarning{}, false
	}
	var w WindowWarning
	if err := json.Unmarshal(line, &w); err != nil {
		return WindowWarning{}, false
	}
	return w, true
}

// windowWarnings returns the warnings of run's replicas, in replica order.
func windowWarnings(run StrategyRun) []WindowWarning {
	var out []WindowWarning
	for _, rp := range run.Replicas {
		if rp.WindowWarning != nil {
			w := *rp.WindowWarning
			w.Replica = rp.ID
			out = append(out, w)
		}
	}
	return out
}

// writeWindowWarnings writes s's window warnings under its verdict.
func writeWindowWarnings(b *strings.Builder, s Summary) {
	for _, w := range s.WindowWarnings {
		fmt.Fprintf(b, "  replica %d warned: window cut at propagation.max with %d callers due (%s)", w.Replica, w.CallersDue, w.Callers)
		if w.PropagationMaxAtLeastMs > 0 {
			fmt.Fprintf(b, "; it asks for propagation.max >= %.0fs, grace_period >= %.0fs, terminationGracePeriodSeconds >= %d",
				float64(w.PropagationMaxAtLeastMs)/1000, float64(w.GracePeriodAtLeastMs)/1000, w.TerminationGracePeriodAtLeastS)
		}
		b.WriteString("\n")
	}
}
