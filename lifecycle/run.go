package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
)

// Run wraps main. It
//
//  1. handles the configured signals (SIGTERM, SIGINT): the first starts the
//     drain, a second forces exit with code 128+signal number at once
//     (os.Exit: Run does not return and deferred functions do not run);
//  2. warms up: runs the warm-up hooks (a drain request cancels them and Run
//     returns nil without ever becoming READY; a failure returns exit code 1);
//  3. serves: starts the servers, moves to READY, and starts the registrars
//     and readiness checks;
//  4. awaits the drain (signal, POST /drain, Drain, ctx done, or a server
//     failing) and runs the drain sequence within budget.Timings.GracePeriod, in
//     Run's own goroutine: every participant call in it is bounded by the
//     lifecycle (a call that ignores its context is abandoned and logged),
//     so nothing of the drain (no step, no stop hook) happens after Run
//     returned; if the grace period runs out, the listeners are closed, what
//     is left is cut, the stop hooks are skipped and the exit code is 1;
//  5. lingers after preStop: if a preStop hook waited for the window (POST
//     /drain?wait=propagation) and no signal has come yet, waits for the
//     kubelet's SIGTERM, which follows the hook's return, at most 5s and
//     never past the grace period: exiting earlier would kill the hook's
//     exec and make the kubelet report a failed preStop hook;
//  6. finishes: moves to STOPPED, logs the timeline and returns.
//
// It returns nil when the drain completed, or an error; pass the result
// to ExitCode. Deferred functions in main run after Run returns, so call
// os.Exit(ExitCode(err)) last. Run may be called once; a second call returns an
// error.
func (l *Lifecycle) Run(ctx context.Context) error {
	r, err := l.begin()
	if err != nil {
		return err
	}
	defer l.handleSignals()()
	if ok, err := l.warmUp(ctx, r); !ok {
		return err
	}
	l.serve(r)
	defer r.stopChecks(l.opts.Checks.Timeout)
	failure := l.awaitDrain(ctx, r)
	cut, overrun := l.drainSequence(r, true)
	if overrun != nil {
		return l.finish(true, overrun)
	}
	l.lingerAfterPreStop(ctx)
	return l.finish(cut, errors.Join(failure, l.serveOutcome(r)))
}

// run is one call of Run: the participants it took and what it started.
type run struct {
	servers    []namedServer
	registrars []*registrarState
	serveErrs  chan error         // failures of Serve, one slot per server
	serving    sync.WaitGroup     // the Serve goroutines
	cancelSync context.CancelFunc // ends the registry sync and the checks
	syncing    sync.WaitGroup     // the registrars' sync loops
	checking   sync.WaitGroup     // the readiness-check loop
}

// begin claims the one Run and takes the participants registered so far.
// With no propagation window it checks the deregistration budget, now that
// the registrars are known; a budget error releases WaitPropagation's
// waiters, since no drain will come.
func (l *Lifecycle) begin() (*run, error) {
	l.mu.Lock()
	if l.running {
		l.mu.Unlock()
		return nil, errors.New("lifecycle: Run called twice")
	}
	l.running = true
	r := &run{
		servers:    append([]namedServer(nil), l.servers...),
		registrars: append([]*registrarState(nil), l.registrars...),
	}
	l.mu.Unlock()
	r.serveErrs = make(chan error, len(r.servers))
	if err := l.checkDeregisterBudget(len(r.registrars)); err != nil {
		l.phase.Advance(phaseWindowEnded)
		return nil, &exitError{code: 1, err: err}
	}
	return r, nil
}

// warmUp runs the warm-up hooks. ok is false when Run must return err
// without serving: warm-up failed (the stop hooks run, then STOPPED, exit
// code 1), or a drain started during warm-up (Drain, a signal, or ctx done),
// which then runs with nothing served: no lame duck, no window.
func (l *Lifecycle) warmUp(ctx context.Context, r *run) (ok bool, err error) {
	err = l.runWarmupHooks(ctx)
	if err != nil && ctx.Err() != nil {
		_ = l.startDrain(CauseOperator, "context: "+ctx.Err().Error())
	}
	if _, draining := l.drainStart(); draining {
		l.drainSequence(r, false)
		return false, l.finish(false, nil)
	}
	if err != nil {
		l.runStopHooks(time.Now().Add(l.opts.Timings.StopTimeout))
		_, _ = l.transition(Stopped, CauseWarmup, "warm-up failed: "+err.Error(), nil)
		return false, &exitError{code: 1, err: err}
	}
	return true, nil
}

// serve starts the servers, moves to READY (unless a drain started since
// warm-up ended), then starts the registry sync and the readiness checks.
func (l *Lifecycle) serve(r *run) {
	for _, s := range r.servers {
		r.serving.Go(func() {
			if err := s.s.Serve((*serverHooks)(l)); err != nil {
				r.serveErrs <- fmt.Errorf("server %s: %w", s.name, err)
			}
		})
	}
	_, _ = l.transition(Ready, CauseWarmup, "warm-up succeeded", func(s State) error { return skipUnless(s == Starting) })
	syncCtx, cancel := context.WithCancel(context.Background())
	r.cancelSync = cancel
	for _, rs := range r.registrars {
		r.syncing.Go(func() { l.syncRegistrar(syncCtx, rs) })
	}
	r.checking.Go(func() { l.runChecks(syncCtx) })
}

// stopChecks ends the readiness checks and waits for a running round up to
// timeout (the checks' own timeout).
func (r *run) stopChecks(timeout time.Duration) {
	r.cancelSync()
	syncx.WaitFor(&r.checking, timeout)
}

// awaitDrain blocks until a drain starts: Drain, POST /drain or a signal,
// or Run's context done or a server failing, which start one here. It
// returns that server's failure, if any.
func (l *Lifecycle) awaitDrain(ctx context.Context, r *run) error {
	select {
	case <-l.phase.Done(phaseDraining):
		return nil
	case failure := <-r.serveErrs:
		_ = l.startDrain(CauseFailure, failure.Error())
		return failure
	case <-ctx.Done():
		_ = l.startDrain(CauseOperator, "context: "+ctx.Err().Error())
		return nil
	}
}

// serveOutcome waits for every Serve to return, and joins the failures not
// yet reported (awaitDrain took the one that started the drain). Serve
// returns once its listeners closed, which the drain did before its stop
// hooks: so the wait is a prompt call's (promptBound), and a Serve still
// running then is abandoned and reported.
func (l *Lifecycle) serveOutcome(r *run) error {
	var err error
	if !syncx.WaitFor(&r.serving, promptBound) {
		err = errors.New("a server's Serve did not return after its listeners closed")
	}
	for len(r.serveErrs) > 0 {
		err = errors.Join(err, <-r.serveErrs)
	}
	return err
}

// graceEnd is t0 plus the grace period: the end of the whole budget.
func (l *Lifecycle) graceEnd() time.Time { return l.t0().Add(l.opts.Timings.GracePeriod) }

// preStopLinger bounds how long Run waits, after a drain whose window a
// preStop hook waited for, for the signal that follows the hook. Run's doc
// states its value.
const preStopLinger = 5 * time.Second

// lingerAfterPreStop waits for the kubelet's SIGTERM after a preStop-started
// drain, still in DRAINING (liveness passes, readiness fails).
func (l *Lifecycle) lingerAfterPreStop(ctx context.Context) {
	if !l.preStopWaited.Load() {
		return
	}
	d := min(preStopLinger, time.Until(l.graceEnd().Add(-l.opts.Timings.Margin()/2)))
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-l.signaled:
	case <-ctx.Done():
	case <-t.C:
		l.opts.Logger.Info("drainkit: no signal after the preStop hook; exiting", "waited_ms", d.Milliseconds())
	}
}

// checkDeregisterBudget checks budget.Timings.CheckDeregisterBudget at the start
// of Run, when the registrars are known; the entry point (drainkit.Main)
// checked it already, before any listener opened.
func (l *Lifecycle) checkDeregisterBudget(registrars int) error {
	if registrars == 0 {
		return nil
	}
	return l.opts.Timings.CheckDeregisterBudget(l.opts.DeregisterTimeout)
}

// finish moves to STOPPED, logs the timeline and maps the outcome to an exit
// code: 1 when something was cut at the deadline or failed.
func (l *Lifecycle) finish(cut bool, failure error) error {
	_, _ = l.transition(Stopped, CauseDrain, "drain sequence done", nil)
	tl, _ := l.Timeline()
	var err error
	switch {
	case failure != nil:
		err = &exitError{code: 1, err: failure}
	case cut:
		err = &exitError{code: 1, err: fmt.Errorf("drain.timeout reached: %d force-closed", tl.ForceClosed)}
	}
	if err != nil {
		l.opts.Logger.Warn("drainkit: drain complete", "exit_code", ExitCode(err), "error", err.Error(), "timeline", tl)
		return err
	}
	l.opts.Logger.Info("drainkit: drain complete", "exit_code", 0, "timeline", tl)
	return err
}
