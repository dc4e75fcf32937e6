package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// Run wraps main. It
//
//  1. handles the configured signals (SIGTERM, SIGINT): the first starts the
//     drain, a second forces exit with code 128+signal number at once;
//  2. runs the warm-up hooks (a drain request cancels them and Run returns
//     nil without ever becoming READY; a failure returns exit code 1);
//  3. starts the servers, moves to READY, and starts the registrars and
//     readiness checks;
//  4. waits for a drain request (signal, POST /drain, Drain, ctx done, or a
//     server failing) and runs the drain sequence within Timings.GracePeriod;
//  5. if a preStop hook waited for the window (POST /drain?wait=propagation)
//     and no signal has come yet, waits for the kubelet's SIGTERM, which
//     follows the hook's return, at most preStopLinger and never past the
//     grace period: exiting earlier would kill the hook's exec and make the
//     kubelet report a failed preStop hook;
//  6. moves to STOPPED, logs the timeline and returns.
//
// It returns nil when the drain completed, or an *ExitError; pass the result
// to ExitCode. Deferred functions in main run after Run returns, so call
// os.Exit(ExitCode(err)) last. Run may be called once; a second call returns an
// error.
func (l *Lifecycle) Run(ctx context.Context) error {
	l.mu.Lock()
	if l.running {
		l.mu.Unlock()
		return errors.New("lifecycle: Run called twice")
	}
	l.running = true
	servers := append([]namedServer(nil), l.servers...)
	registrars := append([]*registrarState(nil), l.registrars...)
	l.mu.Unlock()
	if err := l.checkDeregisterBudget(len(registrars)); err != nil {
		l.endWindow()
		return &ExitError{Code: 1, Err: err}
	}

	sigs := make(chan os.Signal, 2)
	if len(l.opts.signals) > 0 { // Notify with no signals would relay all of them, SIGURG included
		signal.Notify(sigs, l.opts.signals...)
	}
	quit := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(1)
	go func() { defer bg.Done(); l.watchSignals(sigs, quit) }()
	defer func() { signal.Stop(sigs); close(quit); bg.Wait() }()

	// Warm-up.
	err := l.warmup(ctx)
	if err != nil && ctx.Err() != nil {
		_ = l.startDrain(CauseOperator, "context: "+ctx.Err().Error())
	}
	if err != nil && !l.draining.Load() {
		l.runStopHooks(time.Now().Add(l.opts.timings.StopTimeout))
		_, _ = l.transition(Stopped, CauseWarmup, "warm-up failed: "+err.Error(), nil)
		return &ExitError{Code: 1, Err: err}
	}
	if l.draining.Load() {
		l.drainSequence(false, servers, func() {})
		return l.finish(false, nil)
	}

	// Serve, then READY, then registry and checks.
	serveErrs := make(chan error, len(servers))
	var serving sync.WaitGroup
	for _, s := range servers {
		serving.Add(1)
		go func() {
			defer serving.Done()
			if err := s.s.Serve(); err != nil {
				serveErrs <- fmt.Errorf("server %s: %w", s.name, err)
			}
		}()
	}
	_, _ = l.transition(Ready, CauseWarmup, "warm-up succeeded", func(s State) error { return skipUnless(s == Starting) })
	syncCtx, cancelSync := context.WithCancel(context.Background())
	defer cancelSync()
	var syncing, checking sync.WaitGroup
	for _, rs := range registrars {
		syncing.Add(1)
		go func() { defer syncing.Done(); l.syncRegistrar(syncCtx, rs) }()
	}
	checking.Add(1)
	go func() { defer checking.Done(); l.runChecks(syncCtx) }()
	// At t0: stop syncing and checking. A Sync that ignores its context may
	// hold up deregistration briefly, never a check: checks are not waited
	// for until the end.
	stopSync := func() {
		cancelSync()
		waitBounded(&syncing, syncGrace)
	}
	defer waitBounded(&checking, l.opts.checks.Timeout)

	var failure error
	select {
	case <-l.drainStarted:
	case failure = <-serveErrs:
		_ = l.startDrain(CauseFailure, failure.Error())
	case <-ctx.Done():
		_ = l.startDrain(CauseOperator, "context: "+ctx.Err().Error())
	}

	// The drain sequence, within the grace period.
	done := make(chan bool, 1)
	go func() { done <- l.drainSequence(true, servers, stopSync) }()
	grace := time.NewTimer(time.Until(l.t0.Add(l.opts.timings.GracePeriod)))
	defer grace.Stop()
	var cut bool
	select {
	case cut = <-done:
	case <-grace.C:
		// Something ignored its deadline. Stop accepting and cut what is
		// left before the kubelet's SIGKILL does; stop hooks are skipped.
		for _, s := range servers {
			_ = s.s.CloseListeners()
			s.s.ForceClose()
		}
		return l.finish(true, fmt.Errorf("grace period %s exceeded", l.opts.timings.GracePeriod))
	}
	l.lingerAfterPreStop(ctx)
	if !waitBounded(&serving, time.Until(l.t0.Add(l.opts.timings.GracePeriod))) {
		failure = errors.Join(failure, errors.New("a server's Serve did not return after its listeners closed"))
	}
	for len(serveErrs) > 0 {
		failure = errors.Join(failure, <-serveErrs)
	}
	return l.finish(cut, failure)
}

// preStopLinger bounds how long Run waits, after a drain whose window a
// preStop hook waited for, for the signal that follows the hook.
const preStopLinger = 5 * time.Second

// lingerAfterPreStop waits for the kubelet's SIGTERM after a preStop-started
// drain, still in DRAINING (liveness passes, readiness fails).
func (l *Lifecycle) lingerAfterPreStop(ctx context.Context) {
	if !l.preStopWaited.Load() {
		return
	}
	d := min(preStopLinger, time.Until(l.t0.Add(l.opts.timings.GracePeriod-l.opts.timings.Margin()/2)))
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-l.signaled:
	case <-ctx.Done():
	case <-t.C:
		l.opts.logger.Info("drainkit: no signal after the preStop hook; exiting", "waited", d)
	}
}

// syncGrace bounds how long the drain waits for a registrar's running Sync to
// return after its context was cancelled, before deregistering anyway.
const syncGrace = 500 * time.Millisecond

// checkDeregisterBudget: without a propagation window, deregistration is not
// hidden inside propagation.max, so its bound must fit the grace period too.
// Checked at the start of Run, when the registrars are known.
func (l *Lifecycle) checkDeregisterBudget(registrars int) error {
	tm := l.opts.timings
	if registrars == 0 || tm.PropagationMax > 0 {
		return nil
	}
	need := l.opts.deregister + syncGrace + tm.DrainTimeout + tm.StopTimeout + tm.Margin()
	if need <= tm.GracePeriod {
		return nil
	}
	return &RangeError{Key: "registry.deregister_timeout", Value: l.opts.deregister.String(), Allowed: fmt.Sprintf(
		"with no propagation window, registry.deregister_timeout + %s + drain.timeout + stop.timeout + margin (%s) must fit grace_period %s",
		syncGrace, need, tm.GracePeriod)}
}

// finish moves to STOPPED, logs the timeline and maps the outcome to an exit
// code: 1 when something was cut at the deadline or failed.
func (l *Lifecycle) finish(cut bool, failure error) error {
	_, _ = l.transition(Stopped, CauseDrain, "drain sequence done", nil)
	tl, _ := l.Timeline()
	var err error
	switch {
	case failure != nil:
		err = &ExitError{Code: 1, Err: failure}
	case cut:
		err = &ExitError{Code: 1, Err: fmt.Errorf("drain.timeout reached: %d force-closed", tl.ForceClosed)}
	}
	if err != nil {
		l.opts.logger.Warn("drainkit: drain complete", "exit_code", ExitCode(err), "error", err.Error(), "timeline", tl)
		return err
	}
	l.opts.logger.Info("drainkit: drain complete", "exit_code", 0, "timeline", tl)
	return err
}

// warmup runs the warm-up hooks in order within warmup.timeout. A drain
// request cancels it; a hook that ignores cancellation is abandoned.
func (l *Lifecycle) warmup(ctx context.Context) error {
	l.mu.Lock()
	hooks := append([]hook(nil), l.warmups...)
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, l.opts.timings.WarmupTimeout)
	defer cancel()
	go func() {
		select {
		case <-l.drainStarted:
			cancel()
		case <-ctx.Done():
		}
	}()
	for _, h := range hooks {
		if err := callHook(ctx, h); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return fmt.Errorf("warm-up hook %s: warmup.timeout %s exceeded: %w", h.name, l.opts.timings.WarmupTimeout, err)
			}
			return fmt.Errorf("warm-up hook %s: %w", h.name, err)
		}
	}
	return nil
}

// watchSignals turns the first signal into a drain and a second one into an
// immediate exit with 128+signo.
func (l *Lifecycle) watchSignals(sigs <-chan os.Signal, quit <-chan struct{}) {
	n := 0
	for {
		select {
		case <-quit:
			return
		case sig := <-sigs:
			n++
			if n == 1 {
				_ = l.startDrain(CauseSignal, sig.String())
				l.signalOnce.Do(func() { close(l.signaled) })
				continue
			}
			code := 1
			if s, ok := sig.(syscall.Signal); ok {
				code = 128 + int(s)
			}
			l.opts.logger.Error("drainkit: second signal, forcing exit", "signal", sig.String(), "exit_code", code)
			l.opts.exit(code)
			return
		}
	}
}

// waitBounded waits for wg up to d and reports whether it finished.
func waitBounded(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}
