package lifecycle

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/lifecycle/budget"
)

// Lifecycle is one instance's state machine and drain sequence. Create it with
// New, register participants and hooks, then call Run from main. All methods
// are safe for concurrent use; participants and hooks must be added before Run.
type Lifecycle struct {
	opts Options

	state    atomic.Int32 // State; read without the lock by probes and ServerHooks.Arrived
	late     atomic.Int64 // late arrivals
	lastLate atomic.Int64 // offset of the last late arrival from t0, ns
	early    atomic.Int64 // requests cancelled early (ServerHooks.CancelledEarly)
	callers  callerTable  // who sends, and how often: the window's evidence per caller

	phase         *syncx.Phase[phase] // how far the drain has got, for those waiting on it
	preStopWaited atomic.Bool         // WaitPropagation was called (a preStop hook waits)
	signaled      chan struct{}       // closed by watchSignals on Run's first signal

	mu             sync.Mutex
	last           Transition // the one into the current state; see operatorEjectedLocked
	subs           map[*subscription]struct{}
	warmups, stops []hook
	servers        []namedServer
	registrars     []*registrarState
	syncClosed     bool // the drain took the registrars: no Sync begins after
	checkers       []hook
	checkResults   []CheckResult
	timeline       Timeline             // Start is t0: see drainStart
	advice         *budget.WindowAdvice // from Options.EvidenceDir; nil if none
	running        bool
}

type hook struct {
	name string
	fn   func(context.Context) error
}

type namedServer struct {
	name string
	s    Server
}

// New returns a Lifecycle in state STARTING, configured by opts (the zero
// Options is the default lifecycle). It returns a *budget.RangeError if the
// timings, check options or deregistration bound are out of range, so a bad
// configuration fails at start, never mid-drain, and an observer's Attach
// error.
func New(opts Options) (*Lifecycle, error) {
	o := opts.withDefaults()
	if err := o.Timings.Validate(); err != nil {
		return nil, err
	}
	if err := o.Checks.Validate(); err != nil {
		return nil, err
	}
	if o.DeregisterTimeout <= 0 || o.DeregisterTimeout > budget.MaxDuration {
		return nil, &budget.RangeError{Key: "registry.deregister_timeout", Value: o.DeregisterTimeout.String(),
			Allowed: "must be > 0 and <= " + budget.MaxDuration.String()}
	}
	l := &Lifecycle{
		opts:     o,
		phase:    syncx.NewPhase(phaseStopped),
		signaled: make(chan struct{}),
		subs:     map[*subscription]struct{}{},
	}
	l.callers.init(time.Now(), o.Timings.PropagationMax)
	if err := l.loadEvidence(); err != nil {
		return nil, err
	}
	l.last = Transition{From: Starting, To: Starting, Cause: CauseWarmup, Reason: "created", At: time.Now()}
	for _, obs := range o.Observers {
		if a, ok := obs.(interface{ Attach(*Lifecycle) error }); ok {
			if err := a.Attach(l); err != nil {
				return nil, err
			}
		}
	}
	return l, nil
}

// State returns the current state without taking a lock.
func (l *Lifecycle) State() State { return State(l.state.Load()) }

// ServerHooks is how a Server reports its traffic to the lifecycle. Run
// hands it to Server.Serve; it is the lifecycle's only side that a server
// needs, and application code never sees it. Both methods are safe for
// concurrent use from the request path.
type ServerHooks interface {
	// Arrived reports the arrival of one request, call or stream from c.
	// It records c's request in a fixed table of callers (who sends, and
	// how often before the drain: the propagation window's evidence, see
	// awaitWindow); after t0 it also counts a late arrival and records its
	// time, which keeps the window open for budget.Timings.PropagationQuiet,
	// and each caller's own rate keeps it open until that caller has moved.
	// It does not allocate.
	Arrived(c Caller)
	// CancelledEarly reports one request, call or stream whose context was
	// cancelled during the drain by something other than its client or the
	// drain deadline (Timeline.CancelledEarly). Servers call it as the
	// handler returns; it costs one atomic add.
	CancelledEarly()
}

// serverHooks is the Lifecycle seen through ServerHooks: a conversion, not
// a copy, so handing it to a server allocates nothing.
type serverHooks Lifecycle

func (h *serverHooks) Arrived(c Caller) {
	l := (*Lifecycle)(h)
	draining := l.State() >= Draining
	now := time.Now() // once: it costs more than the rest (about 90 ns on a VM's clock)
	if l.opts.Timings.PropagationQuiet > 0 {
		// With quiet 0 only min holds the window open: no evidence to keep.
		l.callers.record(c, now, !draining)
	}
	if draining {
		l.lateArrival(now)
	}
}

func (h *serverHooks) CancelledEarly() { h.early.Add(1) }

func (l *Lifecycle) lateArrival(now time.Time) {
	t0, ok := l.drainStart()
	if !ok {
		return // STOPPED by a failed warm-up: there is no drain to count for
	}
	l.late.Add(1)
	off := int64(now.Sub(t0))
	for {
		cur := l.lastLate.Load()
		if off <= cur || l.lastLate.CompareAndSwap(cur, off) {
			return
		}
	}
}

// Draining returns a channel that is closed when the drain starts (t0:
// readiness already fails), or when Run returns without a drain (a failed
// warm-up). It is for application code outside a request, such as a
// background loop or a cache refresher, that must stop taking new work as the
// instance leaves rotation; a server learns of the drain from LameDuck.
func (l *Lifecycle) Draining() <-chan struct{} { return l.phase.Done(phaseDraining) }

// OnWarmup adds a warm-up hook. Hooks run in order of registration, all
// together bounded by budget.Timings.WarmupTimeout; the first error fails warm-up
// (exit code 1). ctx is cancelled when a drain starts during warm-up.
func (l *Lifecycle) OnWarmup(name string, fn func(ctx context.Context) error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.warmups = append(l.warmups, hook{name, fn})
}

// OnStop adds a stop hook. Stop hooks run once, after in-flight work ended (or
// after a failed or aborted warm-up), in reverse order of registration, all
// together bounded by budget.Timings.StopTimeout (and the grace period): ctx is
// cancelled then, and a hook still running 100ms later is abandoned. An
// error is logged as a warning ("drainkit: stop hook failed"), an abandoned
// hook as "drainkit: participant call abandoned"; neither changes the exit
// code, and the timeline records only when the
// stop hooks were done.
func (l *Lifecycle) OnStop(name string, fn func(ctx context.Context) error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stops = append(l.stops, hook{name, fn})
}

// AddServer adds a Server, identified by name in logs and GET /state.
func (l *Lifecycle) AddServer(name string, s Server) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.servers = append(l.servers, namedServer{name, s})
}

// AddRegistrar adds a Registrar, identified by name in logs and GET /state.
func (l *Lifecycle) AddRegistrar(name string, r Registrar) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.registrars = append(l.registrars, &registrarState{name: name, r: r})
}

// AddCheck adds a readiness check named name (in GET /state and the probes'
// verbose output). Checks run in rounds in the background, all
// concurrently, every budget.CheckOptions.Interval; probe handlers only read
// their cached results. fn must honour ctx: the lifecycle cancels it after
// budget.CheckOptions.Timeout and counts that as a failure, as it counts an
// error. See budget.CheckOptions for the hysteresis between READY and
// EJECTED.
func (l *Lifecycle) AddCheck(name string, fn func(ctx context.Context) error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.checkers = append(l.checkers, hook{name, fn})
	l.checkResults = append(l.checkResults, CheckResult{Name: name})
}

// Drain starts the drain sequence (DESIGN.md section 4) and returns at once;
// readiness fails before it returns. A drain during STARTING cancels warm-up.
// Calling it again, or during DRAINING or STOPPED, joins the running drain and
// returns nil. The sequence itself runs inside Run.
func (l *Lifecycle) Drain(reason string) error {
	return l.startDrain(CauseOperator, reason)
}

func (l *Lifecycle) startDrain(cause Cause, reason string) error {
	_, err := l.transition(Draining, cause, reason, func(from State) error {
		if from == Draining || from == Stopped {
			return errSkip
		}
		return nil
	})
	return err
}

// Eject takes a READY instance out of rotation (POST /eject): readiness fails,
// liveness passes, registrars mark the instance critical or in maintenance.
// Only Restore brings it back. Ejecting an instance the readiness checks
// already ejected makes it operator-ejected (subscribers and registrars get
// EJECTED -> EJECTED with CauseOperator, so Consul switches to maintenance
// mode) and returns nil; other states return an error wrapping
// ErrIllegalTransition.
func (l *Lifecycle) Eject(reason string) error {
	var reEject *Transition
	_, err := l.transition(Ejected, CauseOperator, reason, func(from State) error {
		if from != Ejected {
			return nil
		}
		if !l.operatorEjectedLocked() {
			t := Transition{From: Ejected, To: Ejected, Cause: CauseOperator, Reason: reason, At: time.Now()}
			l.last = t
			for s := range l.subs {
				s.offer(t)
			}
			reEject = &t
		}
		return errSkip
	})
	if reEject != nil {
		l.opts.Logger.Info("drainkit: operator eject of an instance the checks had ejected", "reason", reason)
	}
	return err
}

// Restore returns an operator-ejected instance to READY (POST /restore). It
// returns nil for a READY instance, and an error wrapping ErrIllegalTransition
// when the readiness checks ejected it (their success threshold restores it)
// and in any other state: Restore never ends warm-up early.
func (l *Lifecycle) Restore(reason string) error {
	_, err := l.transition(Ready, CauseOperator, reason, func(from State) error {
		switch {
		case from == Ready:
			return errSkip
		case from != Ejected:
			return &transitionError{from: from, to: Ready}
		case !l.operatorEjectedLocked():
			return &transitionError{from: from, to: Ready, reason: "ejected by readiness checks, not by an operator; it returns when the checks pass"}
		}
		return nil
	})
	return err
}

// WaitPropagation blocks until the propagation window has ended (nil) or ctx
// is done (ctx.Err()). It does not start a drain; POST /drain?wait=propagation
// (a Kubernetes preStop hook) calls Drain, then this. Because the kubelet
// sends SIGTERM only after the hook returns, a drain whose window someone
// waited for makes Run wait, after the drain, for that signal: see Run.
func (l *Lifecycle) WaitPropagation(ctx context.Context) error {
	// Marked on entry, not on return: the drain sequence is woken by the
	// same window end and must not miss a waiter that has yet to run.
	l.preStopWaited.Store(true)
	select {
	case <-l.phase.Done(phaseWindowEnded):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// operatorEjectedLocked reports whether an operator ejected the instance:
// derived, not kept, from the state (EJECTED) and the cause of the transition
// into it (an operator's Eject, or its re-eject of a check-ejected instance,
// which Eject records as EJECTED -> EJECTED). l.mu is held.
func (l *Lifecycle) operatorEjectedLocked() bool {
	return State(l.state.Load()) == Ejected && l.last.Cause == CauseOperator
}

// errSkip, returned by a transition guard, makes the call a no-op.
var errSkip = errors.New("lifecycle: no transition")

// transition moves to `to`. guard, if non-nil, runs with l.mu held and sees
// the current state: an error aborts the call (errSkip: a no-op returning
// nil). Guards may update fields that l.mu protects.
func (l *Lifecycle) transition(to State, cause Cause, reason string, guard func(from State) error) (Transition, error) {
	l.mu.Lock()
	from := State(l.state.Load())
	if guard != nil {
		if err := guard(from); err != nil {
			l.mu.Unlock()
			if err == errSkip {
				err = nil
			}
			return Transition{}, err
		}
	}
	if !canMove(from, to) {
		l.mu.Unlock()
		return Transition{}, &transitionError{from: from, to: to}
	}
	t := Transition{From: from, To: to, Cause: cause, Reason: reason, At: time.Now()}
	l.last = t
	if to == Draining {
		l.timeline = Timeline{Start: t.At, Reason: reason} // t0, before the state says DRAINING
	}
	l.state.Store(int32(to))
	for s := range l.subs {
		s.offer(t)
	}
	l.mu.Unlock()

	l.opts.Logger.Info("drainkit: transition", "from", from.String(), "to", to.String(),
		"cause", string(cause), "reason", reason)
	for _, o := range l.opts.Observers {
		o.OnTransition(t)
	}
	// Only now release what waits for the phase, the drain sequence among
	// them: observers see DRAINING before any drain step, and every step
	// before STOPPED.
	switch to {
	case Draining:
		l.phase.Advance(phaseDraining)
	case Stopped:
		l.phase.Advance(phaseStopped)
	}
	return t, nil
}

// Status is a snapshot for GET /state.
type Status struct {
	State    State          `json:"state"`
	Since    time.Time      `json:"since"`
	Cause    Cause          `json:"cause"`
	Reason   string         `json:"reason"`
	InFlight InFlight       `json:"in_flight"`
	Checks   []CheckResult  `json:"checks"`
	Registry []RegistryInfo `json:"registry"`
	// Timeline is set once the drain has started.
	Timeline *Timeline `json:"timeline,omitempty"`
	// WindowAdvice is the propagation window the last drains' evidence
	// asks for (Options.EvidenceDir); nil if none is kept or none recorded.
	WindowAdvice *budget.WindowAdvice `json:"window_advice,omitempty"`
}

// RegistryInfo is a registrar's last known outcome.
type RegistryInfo struct {
	Name      string    `json:"name"`
	LastOp    string    `json:"last_op,omitempty"` // "sync" or "deregister"
	LastState State     `json:"last_state"`        // the state the last Sync applied
	Err       string    `json:"error,omitempty"`
	At        time.Time `json:"at,omitzero"`
	// Detail is the registrar's own StatusDetail, if it implements
	// StatusDetailer.
	Detail any `json:"detail,omitempty"`
}

// MarshalText renders the state's name, so JSON shows "READY".
func (s State) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Status returns a consistent snapshot of state, in-flight work, check
// results, registry outcomes and (once draining) the timeline.
func (l *Lifecycle) Status() Status {
	l.mu.Lock()
	st := Status{
		State:    State(l.state.Load()),
		Since:    l.last.At,
		Cause:    l.last.Cause,
		Reason:   l.last.Reason,
		Checks:   append([]CheckResult{}, l.checkResults...), // [] in JSON, never null
		Registry: []RegistryInfo{},
	}
	if l.advice != nil {
		a := *l.advice
		st.WindowAdvice = &a
	}
	var detailers []StatusDetailer
	for _, r := range l.registrars {
		info := r.info
		info.Name = r.name
		st.Registry = append(st.Registry, info)
		d, _ := r.r.(StatusDetailer)
		detailers = append(detailers, d)
	}
	servers := append([]namedServer(nil), l.servers...)
	if _, ok := l.drainStart(); ok {
		tl := l.timelineLocked()
		st.Timeline = &tl
	}
	l.mu.Unlock()
	for _, s := range servers {
		st.InFlight = st.InFlight.add(s.s.InFlight())
	}
	for i, d := range detailers {
		if d != nil {
			st.Registry[i].Detail = d.StatusDetail()
		}
	}
	return st
}

// Timeline returns a copy of the drain timeline; ok is false before the drain.
func (l *Lifecycle) Timeline() (tl Timeline, ok bool) {
	if _, ok := l.drainStart(); !ok {
		return Timeline{}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.timelineLocked(), true
}

// drainStart returns t0, the drain's start, and whether a drain started. The
// fact is derived, not kept: the state is DRAINING or STOPPED, and the
// timeline, whose Start is t0, was begun (a failed warm-up stops without a
// drain and leaves Start zero). It needs no lock: transition writes Start
// once, under l.mu, before it stores the state DRAINING, and nothing writes
// it again.
func (l *Lifecycle) drainStart() (t0 time.Time, ok bool) {
	if l.State() < Draining {
		return time.Time{}, false
	}
	t0 = l.timeline.Start
	return t0, !t0.IsZero()
}

// t0 returns the drain's start, for code that runs once phaseDraining was
// reached.
func (l *Lifecycle) t0() time.Time {
	t0, _ := l.drainStart()
	return t0
}

func (l *Lifecycle) timelineLocked() Timeline {
	tl := l.timeline.clone()
	tl.LateArrivals = l.late.Load()
	tl.LastLateArrival = time.Duration(l.lastLate.Load())
	tl.CancelledEarly = l.early.Load()
	return tl
}

// step records a drain step at the current offset from t0.
func (l *Lifecycle) step(name string, err error) {
	l.mu.Lock()
	s := Step{Name: name, Offset: time.Since(l.timeline.Start)}
	if err != nil {
		s.Err = err.Error()
	}
	l.timeline.Steps = append(l.timeline.Steps, s)
	tl := l.timelineLocked()
	l.mu.Unlock()
	if err != nil {
		l.opts.Logger.Warn("drainkit: drain step", "step", name, "offset_ms", s.Offset.Milliseconds(), "error", err)
	} else {
		l.opts.Logger.Debug("drainkit: drain step", "step", name, "offset_ms", s.Offset.Milliseconds())
	}
	for _, o := range l.opts.Observers {
		o.OnDrainStep(tl, s)
	}
}
