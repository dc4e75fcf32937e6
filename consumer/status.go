package consumer

import (
	"fmt"
	"strings"
	"time"
)

// Status is a snapshot of a Transport and its Watcher.
type Status struct {
	WatchStatus
	// Requests counts RoundTrip calls; Retries the extra attempts;
	// BudgetExhausted the retries the budget refused; Failures the calls
	// that returned an error.
	Requests        uint64 `json:"requests"`
	Retries         uint64 `json:"retries"`
	BudgetExhausted uint64 `json:"budget_exhausted"`
	Failures        uint64 `json:"failures"`
	// Ejections counts ejections so far; Ejected is how many candidates
	// are ejected (or being probed) now.
	Ejections uint64 `json:"ejections"`
	Ejected   int    `json:"ejected"`
	// PanicMode is true while an instance that should be ejected is not,
	// because MaxEjectionPercent of the candidates are ejected already;
	// PanicEntries counts the times it began.
	PanicMode    bool   `json:"panic_mode"`
	PanicEntries uint64 `json:"panic_entries"`
	// WrongService counts answers discarded because they came from another
	// service than the one called (see registry.IdentityHeader).
	WrongService uint64 `json:"wrong_service"`
	// SlowStart is true while the candidates include ramping instances.
	SlowStart bool `json:"slow_start"`
	// Endpoints is the view's instances left out for serving no endpoint
	// of Options.Scheme, and the schemes they offer; all of them
	// (Endpoints.Blind) leaves no instance to call.
	Endpoints SchemeGap `json:"endpoints"`
}

// Status returns a snapshot of the Transport's counters, outlier state and
// its Watcher's view.
func (t *Transport) Status() Status {
	s := Status{
		WatchStatus: t.w.Status(),
		Requests:    t.requests.Load(), Retries: t.retries.Load(),
		BudgetExhausted: t.budgetExhausted.Load(), Failures: t.failures.Load(),
		Ejections: t.ejections.Load(), PanicEntries: t.panics.Load(), WrongService: t.mismatches.Load(),
	}
	set := t.set.Load()
	for _, ep := range set.eps {
		if ep.state.Load() != stateHealthy {
			s.Ejected++
		}
	}
	s.SlowStart = set.ramp
	s.Endpoints = t.schemes.Gap()
	t.mu.Lock()
	s.PanicMode = t.refused > 0
	t.mu.Unlock()
	return s
}

// String is one line for logs and the drill's report.
func (s Status) String() string {
	line := fmt.Sprintf("service=%s instances=%d ejected=%d requests=%d retries=%d budget_exhausted=%d failures=%d ejections=%d panic=%t view_revision=%d view_source=%s view_age=%v staleness=%v degraded=%t full_read_repairs=%d",
		s.Service, s.Instances, s.Ejected, s.Requests, s.Retries, s.BudgetExhausted, s.Failures,
		s.Ejections, s.PanicMode, s.Revision, s.Source, s.Age.Round(time.Millisecond),
		s.Staleness.Round(time.Millisecond), s.Degraded, s.FullReadRepairs)
	if g := s.Endpoints; g.Missing > 0 {
		line += fmt.Sprintf(" scheme=%s without_scheme=%d offered=%s", g.Scheme, g.Missing, strings.Join(g.Offered, ","))
	}
	if s.Snapshot != "" {
		line += fmt.Sprintf(" snapshot=%q", s.Snapshot)
	}
	if s.Err != nil {
		line += fmt.Sprintf(" source_err=%q", s.Err.Error())
	}
	return line
}

// InstanceStatus is one candidate instance as the Transport sees it.
type InstanceStatus struct {
	ID   string `json:"id"`
	Addr string `json:"addr"`
	// Ejected is true while the instance is ejected or its half-open probe
	// is in flight.
	Ejected bool `json:"ejected"`
	// Ramping is true while slow start ramps its share.
	Ramping bool `json:"ramping"`
}

// Instances returns the candidate instances, sorted by ID, as the
// Transport picks from them.
func (t *Transport) Instances() []InstanceStatus {
	set := t.set.Load()
	now := t.clock.now()
	out := make([]InstanceStatus, 0, len(set.eps))
	for _, ep := range set.eps {
		out = append(out, InstanceStatus{ID: ep.id, Addr: ep.addr, Ejected: ep.state.Load() != stateHealthy,
			Ramping: set.ramp && ep.inRamp(now, t.opts.SlowStart)})
	}
	return out
}
