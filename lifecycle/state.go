package lifecycle

import (
	"errors"
	"fmt"
	"time"
)

// State is the lifecycle state of an instance. The zero value is Starting.
type State int32

const (
	// Starting: warm-up hooks run; startup and readiness probes fail and
	// nothing is registered.
	Starting State = iota
	// Ready: readiness passes and the instance is registered.
	Ready
	// Ejected: out of rotation (readiness checks failed, or an operator
	// ejected it) but alive; liveness still passes.
	Ejected
	// Draining: readiness fails, the instance is deregistered and serves
	// through the propagation window, then closes its listeners and lets
	// in-flight work finish.
	Draining
	// Stopped: the drain sequence (or a failed warm-up) is over.
	Stopped
)

var stateNames = [...]string{"STARTING", "READY", "EJECTED", "DRAINING", "STOPPED"}

// String returns the upper-case name used in logs and GET /state, e.g. "READY".
func (s State) String() string {
	if s < 0 || int(s) >= len(stateNames) {
		return fmt.Sprintf("State(%d)", int32(s))
	}
	return stateNames[s]
}

// legal is the transition table of DESIGN.md section 1. Draining -> Draining
// is not a transition: a second drain request joins the running drain.
var legal = map[State][]State{
	Starting: {Ready, Draining, Stopped},
	Ready:    {Ejected, Draining},
	Ejected:  {Ready, Draining},
	Draining: {Stopped},
}

func canMove(from, to State) bool {
	for _, s := range legal[from] {
		if s == to {
			return true
		}
	}
	return false
}

// Cause says what triggered a transition.
type Cause string

// Causes of transitions.
const (
	CauseWarmup   Cause = "warmup"   // warm-up hooks succeeded or failed
	CauseChecks   Cause = "checks"   // readiness-check thresholds were crossed
	CauseOperator Cause = "operator" // POST /eject, /restore or /drain, or a call of Eject, Restore or Drain
	CauseSignal   Cause = "signal"   // SIGTERM or SIGINT
	CauseDrain    Cause = "drain"    // the drain sequence finished
	CauseFailure  Cause = "failure"  // a server failed
)

// Transition is one state change. Reason is a human-readable explanation,
// e.g. "terminated" (the signal's name as os.Signal prints it), "POST /drain
// from 127.0.0.1" or "readiness checks failed 3 times in a row".
type Transition struct {
	From   State     `json:"from"`
	To     State     `json:"to"`
	Cause  Cause     `json:"cause"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// ErrIllegalTransition is wrapped by the error of a call that the
// instance's state does not allow: Eject or Restore asking for a move the
// transition table of DESIGN.md section 1 does not have (e.g. Restore while
// DRAINING: "lifecycle: illegal transition DRAINING -> READY"), and Restore
// of an instance its readiness checks ejected, which only their success
// threshold restores. The admin endpoints answer it with 409 Conflict.
var ErrIllegalTransition = errors.New("lifecycle: illegal transition")

// transitionError is a refused move from one state to another. reason, if
// set, replaces the message naming the two states.
type transitionError struct {
	from, to State
	reason   string
}

func (e *transitionError) Error() string {
	if e.reason != "" {
		return "lifecycle: " + e.reason
	}
	return fmt.Sprintf("lifecycle: illegal transition %s -> %s", e.from, e.to)
}

func (e *transitionError) Unwrap() error { return ErrIllegalTransition }
