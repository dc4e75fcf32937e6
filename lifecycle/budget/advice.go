package budget

import "time"

// WindowAdvice is the propagation window the last drains' evidence asks
// for (lifecycle.Options.EvidenceDir): the settings that would have covered
// every caller class's measured staleness in them. It never proposes less
// than was measured. Durations are in nanoseconds in JSON.
type WindowAdvice struct {
	// Drains is how many recorded drains the advice covers (at most
	// EvidenceDrains).
	Drains int `json:"drains"`
	// Need is the longest a window had to last in them: a caller class's
	// last request after the drain's start plus the time it stayed due.
	Need time.Duration `json:"need_ns"`
	// AtLeast says a drain's window was cut at propagation.max with a
	// caller still due: Need is a lower bound.
	AtLeast bool `json:"at_least"`
	// PropagationMax is Need plus 10%, rounded up to a second; twice Need
	// when AtLeast: a cut window measured only a lower bound of the
	// staleness, and doubling reaches any staleness in a few drains
	// (2, 4, 8 times the first cut) where 10% would take many.
	PropagationMax time.Duration `json:"propagation_max_ns"`
	// GracePeriod is the least grace period for PropagationMax with the
	// current drain.timeout and stop.timeout (MinGracePeriod).
	GracePeriod time.Duration `json:"grace_period_ns"`
	// TerminationGracePeriodSeconds is GracePeriod plus PodSlack, in whole
	// seconds as a Kubernetes manifest states it.
	TerminationGracePeriodSeconds int64 `json:"termination_grace_period_seconds"`
}

// EvidenceDrains is how many of the last drains a WindowAdvice covers.
const EvidenceDrains = 10

// Advise returns the WindowAdvice for need, the longest window the
// recorded drains (drains of them) needed; atLeast marks need as a lower
// bound. t supplies drain.timeout and stop.timeout.
func (t Timings) Advise(need time.Duration, drains int, atLeast bool) WindowAdvice {
	m := need + need/10
	if atLeast {
		m = 2 * need
	}
	if r := m % time.Second; r != 0 {
		m += time.Second - r
	}
	fit := t
	fit.PropagationMax = m
	grace := fit.MinGracePeriod()
	tgps := grace + PodSlack
	return WindowAdvice{Drains: drains, Need: need, AtLeast: atLeast, PropagationMax: m, GracePeriod: grace,
		TerminationGracePeriodSeconds: int64((tgps + time.Second - 1) / time.Second)}
}
