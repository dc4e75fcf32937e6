package telemetry

import (
	"time"

	"github.com/drainkit/drainkit/lifecycle"
)

// Phases of a drain, the values of the phase attribute of
// drainkit.drain.duration. Each is recorded once per drain, when the step
// that ends it is recorded; phases whose steps did not happen are not
// recorded (no deregistration without a registrar, no listener phases for a
// drain that began during warm-up).
const (
	// PhaseDeregister: t0 to lifecycle.StepDeregistered.
	PhaseDeregister = "deregister"
	// PhaseConfirm: t0 to lifecycle.StepConfirmed (the registry confirmed
	// the instance is gone).
	PhaseConfirm = "confirm"
	// PhasePropagation: t0 to lifecycle.StepWindowEnded, the propagation
	// window.
	PhasePropagation = "propagation"
	// PhaseCloseListeners: StepWindowEnded to StepListenersClosed.
	PhaseCloseListeners = "close_listeners"
	// PhaseInFlight: StepListenersClosed to StepIdle or StepForceClosed, the
	// wait for in-flight work (bounded by drain.timeout).
	PhaseInFlight = "in_flight"
	// PhaseStopHooks: the step before the stop hooks (StepIdle,
	// StepForceClosed or StepWindowEnded) to the flush, the last stop hook,
	// so that it is exported (StepStopHooksDone for a Telemetry that was
	// not attached).
	PhaseStopHooks = "stop_hooks"
	// PhaseTotal: t0 to the flush (or StepStopHooksDone), the whole drain
	// but the flush itself.
	PhaseTotal = "total"
)

type phase struct {
	name string
	d    time.Duration
}

// phasesAt returns the phases that steps[i] ends, measured from the
// timeline's offsets.
func phasesAt(steps []lifecycle.Step, i int) []phase {
	s := steps[i]
	before := func(names ...string) (time.Duration, bool) {
		var at time.Duration
		found := false
		for _, p := range steps[:i] {
			for _, n := range names {
				if p.Name == n && (!found || p.Offset > at) {
					at, found = p.Offset, true
				}
			}
		}
		return at, found
	}
	switch s.Name {
	case lifecycle.StepDeregistered:
		return []phase{{PhaseDeregister, s.Offset}}
	case lifecycle.StepConfirmed:
		return []phase{{PhaseConfirm, s.Offset}}
	case lifecycle.StepWindowEnded:
		return []phase{{PhasePropagation, s.Offset}}
	case lifecycle.StepListenersClosed:
		if at, ok := before(lifecycle.StepWindowEnded); ok {
			return []phase{{PhaseCloseListeners, s.Offset - at}}
		}
	case lifecycle.StepIdle, lifecycle.StepForceClosed:
		if at, ok := before(lifecycle.StepListenersClosed); ok {
			return []phase{{PhaseInFlight, s.Offset - at}}
		}
	case lifecycle.StepStopHooksDone:
		return endPhases(steps[:i], s.Offset)
	}
	return nil
}

// endPhases returns the phases that end with the drain, at offset end from
// t0: PhaseTotal, and PhaseStopHooks from the last of steps that precede
// the stop hooks.
func endPhases(steps []lifecycle.Step, end time.Duration) []phase {
	out := []phase{{PhaseTotal, end}}
	var at time.Duration
	found := false
	for _, p := range steps {
		switch p.Name {
		case lifecycle.StepIdle, lifecycle.StepForceClosed, lifecycle.StepWindowEnded:
			if !found || p.Offset > at {
				at, found = p.Offset, true
			}
		}
	}
	if found {
		out = append(out, phase{PhaseStopHooks, end - at})
	}
	return out
}
