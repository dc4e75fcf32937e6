package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// drainSequence runs DESIGN.md section 4 from t0 and reports whether
// anything had to be force-closed at the drain deadline. served says
// whether the servers were started (false when the drain began in STARTING:
// nothing was registered, so there is no window). stopSync ends the registry
// and check loops and waits for them.
func (l *Lifecycle) drainSequence(served bool, servers []namedServer, stopSync func()) bool {
	<-l.phase.wait(phaseDraining) // observers have seen DRAINING
	graceEnd := l.graceEnd()

	// t0: readiness already fails (the transition did that); lame duck.
	if served {
		for _, s := range servers {
			s.s.LameDuck()
		}
	}
	l.step(StepNotReady, nil)

	// Deregister, bounded; a failing registry never blocks the drain.
	stopSync()
	dereg := l.deregisterBounded()

	// Confirmation runs alongside the window and ends with it at the latest.
	endConfirm := l.confirmDuringWindow()
	if served {
		l.awaitWindow(dereg)
	}
	l.phase.reach(phaseWindowEnded)
	l.step(StepWindowEnded, nil)
	endConfirm()

	cut := false
	if served {
		cut = l.closeAndAwait(servers, graceEnd)
	}

	l.runStopHooks(graceEnd)
	l.step(StepStopHooksDone, nil)
	return cut
}

// deregisterBounded deregisters every synced registrar within
// registry.deregister_timeout (capped by propagation.max when there is a
// window), records StepDeregistered if there was any, and returns when
// deregistration finished.
func (l *Lifecycle) deregisterBounded() time.Time {
	tm := l.opts.timings
	bound := l.opts.deregister
	if tm.PropagationMax > 0 && tm.PropagationMax < bound {
		bound = tm.PropagationMax
	}
	if synced := l.syncedRegistrars(); len(synced) > 0 {
		l.step(StepDeregistered, l.deregisterAll(synced, time.Now().Add(bound)))
	}
	return time.Now()
}

// confirmDuringWindow starts the registrars' Confirm calls, if any can
// confirm, and returns end, which cancels those still running (the window is
// over) and waits for StepConfirmed to be recorded.
func (l *Lifecycle) confirmDuringWindow() (end func()) {
	cs := l.confirmers()
	if len(cs) == 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(context.Background())
	var confirming sync.WaitGroup
	confirming.Go(func() {
		errs := make([]error, len(cs))
		var each sync.WaitGroup
		for i, c := range cs {
			each.Go(func() { errs[i] = c.Confirm(ctx) })
		}
		each.Wait()
		l.step(StepConfirmed, errors.Join(errs...))
	})
	return func() { cancel(); confirming.Wait() }
}

// closeAndAwait closes all listeners, waits for in-flight work up to
// drain.timeout (and never into the stop hooks' share of the grace period),
// then force-closes what is left. It reports whether any server had to be
// force-closed, even if that server counted nothing as cut.
func (l *Lifecycle) closeAndAwait(servers []namedServer, graceEnd time.Time) bool {
	var inflight InFlight
	var errs []error
	for _, s := range servers {
		if err := s.s.CloseListeners(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.name, err))
		}
		inflight = inflight.add(s.s.InFlight())
	}
	l.mu.Lock()
	l.timeline.InFlightAtClose = inflight
	l.mu.Unlock()
	l.step(StepListenersClosed, errors.Join(errs...))

	deadline := time.Now().Add(l.opts.timings.DrainTimeout)
	if limit := graceEnd.Add(-l.opts.timings.StopTimeout); limit.Before(deadline) {
		deadline = limit
	}
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	idle := make([]bool, len(servers))
	var awaiting sync.WaitGroup
	for i, s := range servers {
		awaiting.Go(func() { idle[i] = s.s.AwaitIdle(ctx) == nil })
	}
	awaiting.Wait()

	forced := 0
	for i, s := range servers {
		if !idle[i] {
			n := s.s.ForceClose()
			forced += n
			l.opts.logger.Warn("drainkit: force-closed at drain timeout", "server", s.name, "cut", n)
		}
	}
	if !slices.Contains(idle, false) {
		l.step(StepIdle, nil)
		return false
	}
	l.mu.Lock()
	l.timeline.ForceClosed = forced
	l.mu.Unlock()
	l.step(StepForceClosed, fmt.Errorf("drain.timeout %s reached: %d cut", l.opts.timings.DrainTimeout, forced))
	return true
}
