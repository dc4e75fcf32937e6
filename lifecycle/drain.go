package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"
)

// drainSequence runs DESIGN.md section 4 from t0, in Run's goroutine, and
// reports whether anything had to be force-closed. served says whether the
// servers were started (false when the drain began in STARTING: nothing was
// registered, so there is no window). There is no window either when
// nothing routes to the instance (run.discoverable): the listeners close
// right after deregistration.
//
// Every participant call it makes is bounded by the lifecycle itself
// (callBounded), never only by the participant honouring its context, and
// every bound ends at the grace period's end at the latest: so the sequence
// returns by then, plus abandonGrace and the prompt calls of the final cut,
// and nothing of it (no step, no stop hook) happens after Run returned. If
// the grace period ran out, overrun says so: the listeners were closed and
// what was left cut, the stop hooks skipped.
func (l *Lifecycle) drainSequence(r *run, served bool) (cut bool, overrun error) {
	<-l.phase.Done(phaseDraining) // observers have seen DRAINING
	graceEnd := l.graceEnd()
	grace, cancel := context.WithDeadline(context.Background(), graceEnd)
	defer cancel()

	// t0: readiness already fails (the transition did that); lame duck.
	if served {
		l.eachServer(r.servers, "LameDuck", func(_ int, s Server) error { s.LameDuck(); return nil })
	}
	l.step(StepNotReady, nil)

	// Deregister, bounded; a failing registry never blocks the drain.
	synced := l.stopSync(r)
	dereg := l.deregisterBounded(grace, synced)

	// Confirmation runs alongside the window and ends with it at the latest.
	confirmed, endConfirm := l.confirmDuringWindow(grace, synced)
	window := served && l.holdWindow(r)
	var measured budget.DrainEvidence
	if window {
		tm := l.opts.Timings
		cutAtMax := l.awaitWindow(dereg, confirmed)
		measured = l.callers.measure(l.t0(), time.Now(), tm.PropagationQuiet, tm.PropagationMax, cutAtMax)
	}
	l.phase.Advance(phaseWindowEnded)
	l.step(StepWindowEnded, nil)
	endConfirm()

	if served {
		cut = l.closeAndAwait(grace, r.servers, graceEnd)
	}
	if window {
		l.recordEvidence(measured)
	}
	if grace.Err() != nil {
		return true, fmt.Errorf("grace period %s exceeded", l.opts.Timings.GracePeriod)
	}
	l.runStopHooks(graceEnd)
	l.step(StepStopHooksDone, nil)
	return cut, nil
}

// holdWindow reports whether the drain of run r holds the propagation
// window: whether the instance is discoverable (run.discoverable). When it
// is not, it logs why the window is skipped: nothing would notice it.
func (l *Lifecycle) holdWindow(r *run) bool {
	if r.discoverable() {
		return true
	}
	l.opts.Logger.Info("drainkit: no propagation window: nothing routes to this instance (no registrar, no server consumers route to)",
		"servers", len(r.servers))
	return false
}

// discoverable reports whether consumers can find the instance and send it
// work, so that the drain must give them the propagation window to notice:
// it has a registrar (a registry lists it), or a server whose Routed method
// (see Server) does not report false: a listener a load balancer or a
// Kubernetes Service may point at. A process whose only servers are workdrain workers, and
// which registers nowhere, is not: its work comes from a queue or a clock.
// The admin listener does not count: probes, /state and /drain are the
// platform's, not consumers' traffic.
func (r *run) discoverable() bool {
	if len(r.registrars) > 0 {
		return true
	}
	for _, s := range r.servers {
		if rt, ok := s.s.(routed); !ok || rt.Routed() {
			return true
		}
	}
	return false
}

// routed is the optional method of a Server that says whether consumers
// route work to it (see Server). It is not exported: the lifecycle's API
// stays small, and a Server only needs the method.
type routed interface{ Routed() bool }

// eachServer makes the prompt call named call (callPrompt) on every server,
// concurrently, and returns the errors by server, nil where it succeeded.
func (l *Lifecycle) eachServer(servers []namedServer, call string, fn func(i int, s Server) error) []error {
	errs := make([]error, len(servers))
	var each sync.WaitGroup
	for i, s := range servers {
		each.Go(func() { errs[i] = l.callPrompt(s.name, call, func() error { return fn(i, s.s) }) })
	}
	each.Wait() // each call is bounded
	return errs
}

// deregisterBounded deregisters the synced registrars within
// registry.deregister_timeout (capped by propagation.max when there is a
// window), records StepDeregistered if there was any, and returns when
// deregistration finished.
func (l *Lifecycle) deregisterBounded(grace context.Context, synced []*registrarState) time.Time {
	tm := l.opts.Timings
	bound := l.opts.DeregisterTimeout
	if tm.PropagationMax > 0 && tm.PropagationMax < bound {
		bound = tm.PropagationMax
	}
	if len(synced) > 0 {
		l.step(StepDeregistered, l.deregisterAll(grace, synced, time.Now().Add(bound)))
	}
	return time.Now()
}

// confirmDuringWindow starts the Confirm calls of the synced registrars that
// can confirm, if any, and returns confirmed, closed once every one of them
// confirmed (nil if none can; never closed if one fails), and end, which
// cancels those still running (the window is over) and waits for
// StepConfirmed to be recorded: at most abandonGrace, since each call is
// bounded.
func (l *Lifecycle) confirmDuringWindow(grace context.Context, synced []*registrarState) (confirmed <-chan struct{}, end func()) {
	var cs []*registrarState
	for _, rs := range synced {
		if _, ok := rs.r.(DeregistrationConfirmer); ok {
			cs = append(cs, rs)
		}
	}
	if len(cs) == 0 {
		return nil, func() {}
	}
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(grace)
	var confirming sync.WaitGroup
	confirming.Go(func() {
		errs := make([]error, len(cs))
		var each sync.WaitGroup
		for i, rs := range cs {
			c := rs.r.(DeregistrationConfirmer)
			each.Go(func() { errs[i] = l.callBounded(ctx, rs.name, "Confirm", c.Confirm) })
		}
		each.Wait()
		err := errors.Join(errs...)
		if err == nil {
			close(done)
		}
		l.step(StepConfirmed, err)
	})
	return done, func() { cancel(); confirming.Wait() }
}

// closeAndAwait closes all listeners, waits for in-flight work up to
// drain.timeout (and never into the stop hooks' share of the grace period,
// nor past its end), then force-closes what is left. It reports whether any
// server had to be force-closed, even if that server counted nothing as cut.
func (l *Lifecycle) closeAndAwait(grace context.Context, servers []namedServer, graceEnd time.Time) bool {
	deadline := time.Now().Add(l.opts.Timings.DrainTimeout)
	if limit := graceEnd.Add(-l.opts.Timings.StopTimeout); limit.Before(deadline) {
		deadline = limit
	}
	counts := make([]InFlight, len(servers))
	errs := l.eachServer(servers, "CloseListeners", func(i int, s Server) error {
		err := s.CloseListeners()
		counts[i] = s.InFlight()
		return err
	})
	var inflight InFlight
	for i, s := range servers {
		if errs[i] != nil {
			errs[i] = fmt.Errorf("%s: %w", s.name, errs[i])
			if errors.Is(errs[i], errAbandoned) {
				continue // counts[i] may still be written
			}
		}
		inflight = inflight.add(counts[i])
	}
	l.mu.Lock()
	l.timeline.InFlightAtClose = inflight
	l.mu.Unlock()
	l.step(StepListenersClosed, errors.Join(errs...))

	ctx, cancel := context.WithDeadline(grace, deadline)
	defer cancel()
	idle := make([]bool, len(servers))
	var awaiting sync.WaitGroup
	for i, s := range servers {
		awaiting.Go(func() { idle[i] = l.callBounded(ctx, s.name, "AwaitIdle", s.s.AwaitIdle) == nil })
	}
	awaiting.Wait() // each call is bounded

	forced := 0
	for i, s := range servers {
		if idle[i] {
			continue
		}
		var n, counted int
		if l.callPrompt(s.name, "ForceClose", func() error { counted = s.s.ForceClose(); return nil }) == nil {
			n = counted // not read if abandoned: it may still be written
		}
		forced += n
		l.opts.Logger.Warn("drainkit: force-closed at drain timeout", "server", s.name, "cut", n)
	}
	if !slices.Contains(idle, false) {
		l.step(StepIdle, nil)
		return false
	}
	l.mu.Lock()
	l.timeline.ForceClosed = forced
	l.mu.Unlock()
	limit := fmt.Sprintf("drain.timeout %s", l.opts.Timings.DrainTimeout)
	if grace.Err() != nil {
		limit = fmt.Sprintf("grace_period %s", l.opts.Timings.GracePeriod)
	}
	l.step(StepForceClosed, fmt.Errorf("%s reached: %d cut", limit, forced))
	return true
}
