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
	// PropagationMax is Need plus 10%, rounded up to a second; CutFactor
	// times Need when AtLeast (a cut window measured only a lower bound of
	// the staleness), but no more than AdviceCeiling or Need, whichever is
	// longer.
	PropagationMax time.Duration `json:"propagation_max_ns"`
	// Capped says CutFactor times Need passed AdviceCeiling: a caller was
	// still due so long after the drain's start that it likely does not
	// follow the registry at all, and a longer window would not help it.
	Capped bool `json:"capped,omitempty"`
	// GracePeriod is the least grace period for PropagationMax with the
	// current drain.timeout and stop.timeout (MinGracePeriod).
	GracePeriod time.Duration `json:"grace_period_ns"`
	// TerminationGracePeriodSeconds is GracePeriod plus PodSlack, in whole
	// seconds as a Kubernetes manifest states it.
	TerminationGracePeriodSeconds int64 `json:"termination_grace_period_seconds"`
}

// CutFactor is how many times the need Advise proposes as propagation.max
// when the need is only a lower bound (a window was cut at propagation.max
// with a caller still due). The caller's staleness is then unknown beyond
// the cut, and the two ways to miss cost differently: a proposal below the
// staleness loses that caller's requests in the next drain and takes
// another drill to learn more, while one above it costs only a longer
// grace period (and terminationGracePeriodSeconds), not drain time:
// propagation.max is a ceiling, and the window still ends as soon as every
// known caller has moved. So the proposal aims high: 4 times a cut at the
// default propagation.max of 12s (a need of 12 s or more) covers a
// staleness up to 48 s in the next drain, past the consumer caches met in
// practice (Spring Cloud LoadBalancer's 35 s plus the registry's push,
// Ribbon's 30 s, a JVM's 30 s DNS cache), where doubling (24-30 s, the
// need counting the caller's wait past the cut) falls short of them; and
// a longer staleness is reached in half the drills doubling takes (4, 16,
// 64 times the first cut), up to AdviceCeiling. Once a drain that was not
// cut measured the callers (WindowEvidence.Advice), the proposal falls
// back to the measured need plus 10%.
const CutFactor = 4

// AdviceCeiling is the longest propagation.max Advise reaches by
// multiplying a cut window's need (CutFactor). A caller still sending
// minutes after the drain's start is not behind a discovery cache (the
// longest chains met in practice, Eureka's server and client caches plus
// Ribbon's, stay under 2 minutes): it pinned the address or keeps a pool
// that never re-resolves, and only fixing that caller helps it. Without a
// ceiling the proposal would grow 4 times per drill without end. A need
// measured beyond it is still proposed as measured, never less.
const AdviceCeiling = 5 * time.Minute

// EvidenceDrains is how many of the last drains a WindowAdvice covers.
const EvidenceDrains = 10

// Advise returns the WindowAdvice for need, the longest window the
// recorded drains (drains of them) needed; atLeast marks need as a lower
// bound (then propagation.max is CutFactor times need, up to
// AdviceCeiling or need, else need plus 10%). t supplies drain.timeout and
// stop.timeout.
func (t Timings) Advise(need time.Duration, drains int, atLeast bool) WindowAdvice {
	m := need + need/10
	capped := false
	if atLeast {
		m = CutFactor * need
		if m > AdviceCeiling {
			m, capped = max(AdviceCeiling, need), true
		}
	}
	if r := m % time.Second; r != 0 {
		m += time.Second - r
	}
	fit := t
	fit.PropagationMax = m
	grace := fit.MinGracePeriod()
	tgps := grace + PodSlack
	return WindowAdvice{Drains: drains, Need: need, AtLeast: atLeast, PropagationMax: m, Capped: capped, GracePeriod: grace,
		TerminationGracePeriodSeconds: int64((tgps + time.Second - 1) / time.Second)}
}
