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
//  5. moves to STOPPED, logs the timeline and returns.
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
		return l.finish(0, nil)
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
	_, _ = l.transition(Ready, CauseWarmup, "warm-up succeeded", func(s State) bool { return s == Draining })
	syncCtx, cancelSync := context.WithCancel(context.Background())
	var syncing sync.WaitGroup
	for _, rs := range registrars {
		syncing.Add(1)
		go func() { defer syncing.Done(); l.syncRegistrar(syncCtx, rs) }()
	}
	syncing.Add(1)
	go func() { defer syncing.Done(); l.runChecks(syncCtx) }()
	stopSync := func() {
		cancelSync()
		waitBounded(&syncing, l.opts.deregister)
	}

	var failure error
	select {
	case <-l.drainStarted:
	case failure = <-serveErrs:
		_ = l.startDrain(CauseFailure, failure.Error())
	case <-ctx.Done():
		_ = l.startDrain(CauseOperator, "context: "+ctx.Err().Error())
	}

	// The drain sequence, within the grace period.
	done := make(chan int, 1)
	go func() { done <- l.drainSequence(true, servers, stopSync) }()
	grace := time.NewTimer(time.Until(l.t0.Add(l.opts.timings.GracePeriod)))
	defer grace.Stop()
	var forced int
	select {
	case forced = <-done:
	case <-grace.C:
		return l.finish(0, fmt.Errorf("grace period %s exceeded", l.opts.timings.GracePeriod))
	}
	if !waitBounded(&serving, time.Until(l.t0.Add(l.opts.timings.GracePeriod))) {
		failure = errors.Join(failure, errors.New("a server's Serve did not return after its listeners closed"))
	}
	for len(serveErrs) > 0 {
		failure = errors.Join(failure, <-serveErrs)
	}
	return l.finish(forced, failure)
}

// finish moves to STOPPED, logs the timeline and maps the outcome to an exit
// code.
func (l *Lifecycle) finish(forced int, failure error) error {
	_, _ = l.transition(Stopped, CauseDrain, "drain sequence done", nil)
	tl, _ := l.Timeline()
	var err error
	switch {
	case failure != nil:
		err = &ExitError{Code: 1, Err: failure}
	case forced > 0:
		err = &ExitError{Code: 1, Err: fmt.Errorf("%d force-closed at drain.timeout", forced)}
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
