package lifecycle

import (
	"context"
	"errors"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

func TestRunDrainSequenceOrder(t *testing.T) {
	rec := &recorder{}
	obs := &observer{}
	l := newTest(t, Options{Timings: fastTimings(200*time.Millisecond, 0, 200*time.Millisecond), Observers: []Observer{obs}})
	srv := newFakeServer(rec, "http")
	reg := newFakeRegistrar(rec)
	l.AddServer("http", srv)
	l.AddRegistrar("fake", reg)
	l.OnWarmup("w", func(context.Context) error { rec.add("warmup"); return nil })
	l.OnStop("first", func(context.Context) error { rec.add("stop.first"); return nil })
	l.OnStop("second", func(context.Context) error { rec.add("stop.second"); return nil })

	res := runAsync(l)
	<-reg.synced
	if l.State() != Ready {
		t.Fatalf("registrar synced in state %s", l.State())
	}
	if err := l.Drain("test"); err != nil {
		t.Fatal(err)
	}
	if err := waitResult(t, res, 5*time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
	// Serve runs in its own goroutine, started before READY: when it gets
	// to run relative to Sync or LameDuck is up to the scheduler.
	got := rec.list()
	if i, j := slices.Index(got, "http.serve"), slices.Index(got, "http.close"); i < 1 || j < i {
		t.Fatalf("Serve not called between warm-up and closing the listeners: %v", got)
	}
	got = slices.DeleteFunc(got, func(s string) bool { return s == "http.serve" })
	want := []string{"warmup", "reg.sync.READY", "http.lameduck", "reg.deregister", "reg.confirm",
		"http.close", "http.await", "stop.second", "stop.first"}
	if !slices.Equal(got, want) {
		t.Fatalf("calls\n got %v\nwant %v", got, want)
	}
	tl, _ := l.Timeline()
	var names []string
	for _, s := range tl.Steps {
		names = append(names, s.Name)
	}
	wantSteps := []string{StepNotReady, StepDeregistered, StepConfirmed, StepWindowEnded, StepListenersClosed, StepIdle, StepStopHooksDone}
	if !slices.Equal(names, wantSteps) {
		t.Fatalf("steps %v, want %v", names, wantSteps)
	}
	if off, _ := tl.Offset(StepWindowEnded); off < 200*time.Millisecond {
		t.Fatalf("window ended at %v, before propagation.min", off)
	}
	if tl.InFlightAtClose.Requests != 1 {
		t.Fatalf("in-flight at close %+v", tl.InFlightAtClose)
	}
	if l.State() != Stopped || !obs.reached(Ready) {
		t.Fatalf("state %s, transitions %v", l.State(), obs.ts)
	}
	select {
	case <-l.phase.Done(phaseStopped):
	default:
		t.Fatal("stopped not closed")
	}
}

// TestQuietKeepsWindowOpen runs on synctest's clock: the window's bounds are
// checked exactly, and the test takes no real time.
func TestQuietKeepsWindowOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newTest(t, Options{Timings: fastTimings(100*time.Millisecond, 300*time.Millisecond, 3*time.Second), Signals: []os.Signal{}})
		l.AddServer("http", newFakeServer(&recorder{}, "http"))
		res := runAsync(l)
		waitState(t, l, Ready)
		_ = l.Drain("test")
		// Stale consumers keep sending for 600 ms after t0.
		tick := time.NewTicker(50 * time.Millisecond)
		for start := time.Now(); time.Since(start) < 600*time.Millisecond; {
			<-tick.C
			hooks(l).Arrived(Caller{})
		}
		tick.Stop()
		if err := waitResult(t, res, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		tl, _ := l.Timeline()
		end, _ := tl.Offset(StepWindowEnded)
		if tl.LastLateArrival != 600*time.Millisecond || end != tl.LastLateArrival+300*time.Millisecond {
			t.Fatalf("window ended at %v; last late arrival %v, want 600ms, and quiet 300ms after it", end, tl.LastLateArrival)
		}
		if tl.LateArrivals != 12 {
			t.Fatalf("late arrivals %d, want 12 (every 50ms for 600ms)", tl.LateArrivals)
		}
	})
}

// TestWaitPropagation runs on synctest's clock: the preStop linger that
// follows (5s with no signal) takes no real time.
func TestWaitPropagation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tm := fastTimings(300*time.Millisecond, 0, 300*time.Millisecond)
		l := newTest(t, Options{Timings: tm, Signals: []os.Signal{}})
		l.AddServer("http", newFakeServer(&recorder{}, "http"))
		res := runAsync(l)
		waitState(t, l, Ready)
		start := time.Now()
		_ = l.Drain("prestop")
		if err := l.WaitPropagation(context.Background()); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 300*time.Millisecond {
			t.Fatalf("WaitPropagation returned after %v, want the window's 300ms", d)
		}
		_ = l.Drain("SIGTERM joins")
		// No signal follows in this test: Run waits for it up to
		// preStopLinger, and never past half the margin before the grace
		// period's end.
		if err := waitResult(t, res, preStopLinger+5*time.Second); err != nil {
			t.Fatal(err)
		}
		want := min(300*time.Millisecond+preStopLinger, tm.GracePeriod-tm.Margin()/2)
		if d := time.Since(start); d != want {
			t.Fatalf("Run returned %v after the drain began, want %v", d, want)
		}
	})
}

func TestDrainDuringWarmup(t *testing.T) {
	rec := &recorder{}
	obs := &observer{}
	l := newTest(t, Options{Observers: []Observer{obs}})
	srv := newFakeServer(rec, "http")
	reg := newFakeRegistrar(rec)
	l.AddServer("http", srv)
	l.AddRegistrar("fake", reg)
	warming := make(chan struct{})
	l.OnWarmup("slow", func(ctx context.Context) error {
		close(warming)
		<-ctx.Done()
		return ctx.Err()
	})
	l.OnStop("cleanup", func(context.Context) error { rec.add("stop"); return nil })
	res := runAsync(l)
	<-warming
	_ = l.Drain("SIGTERM")
	if err := waitResult(t, res, time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if obs.reached(Ready) {
		t.Fatal("became READY although the drain started during warm-up")
	}
	if got := rec.list(); !slices.Equal(got, []string{"stop"}) {
		t.Fatalf("calls %v: servers and registrars must not run", got)
	}
	if err := l.WaitPropagation(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestWarmupFailure(t *testing.T) {
	rec := &recorder{}
	l := newTest(t, Options{})
	l.AddServer("http", newFakeServer(rec, "http"))
	l.OnWarmup("db", func(context.Context) error { return errors.New("connection refused") })
	l.OnStop("cleanup", func(context.Context) error { rec.add("stop"); return nil })
	err := l.Run(context.Background())
	if ExitCode(err) != 1 || !strings.Contains(err.Error(), "db") {
		t.Fatalf("Run: %v (code %d)", err, ExitCode(err))
	}
	if l.State() != Stopped || !slices.Equal(rec.list(), []string{"stop"}) {
		t.Fatalf("state %s calls %v", l.State(), rec.list())
	}
	select { // POST /drain?wait=propagation must not hang after a failed warm-up
	case <-l.phase.Done(phaseWindowEnded):
	default:
		t.Fatal("WindowEnded not closed after a failed warm-up")
	}
}

func TestWarmupTimeout(t *testing.T) {
	tm := fastTimings(0, 0, 0)
	tm.WarmupTimeout = 100 * time.Millisecond
	l := newTest(t, Options{Timings: tm})
	l.OnWarmup("caches", func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	err := l.Run(context.Background())
	if ExitCode(err) != 1 || !strings.Contains(err.Error(), "warmup.timeout") {
		t.Fatalf("Run: %v", err)
	}
}

func TestForceCloseAtDrainTimeout(t *testing.T) {
	tm := fastTimings(0, 0, 0)
	tm.DrainTimeout = 300 * time.Millisecond
	l := newTest(t, Options{Timings: tm})
	srv := newFakeServer(&recorder{}, "http")
	srv.stuck, srv.cut = true, 2
	l.AddServer("http", srv)
	res := runAsync(l)
	waitState(t, l, Ready)
	_ = l.Drain("test")
	err := waitResult(t, res, 5*time.Second)
	if ExitCode(err) != 1 {
		t.Fatalf("Run: %v, want exit code 1", err)
	}
	tl, _ := l.Timeline()
	closed, _ := tl.Offset(StepListenersClosed)
	forced, ok := tl.Offset(StepForceClosed)
	if !ok || tl.ForceClosed != 2 {
		t.Fatalf("timeline %+v", tl)
	}
	if d := forced - closed; d < 300*time.Millisecond || d > 800*time.Millisecond {
		t.Fatalf("forced %v after listeners closed, want about drain.timeout 300ms", d)
	}
}

func TestSlowRegistryDoesNotBlockDrain(t *testing.T) {
	rec := &recorder{}
	l := newTest(t, Options{Timings: fastTimings(0, 0, 0), DeregisterTimeout: 200 * time.Millisecond})
	reg := newFakeRegistrar(rec)
	reg.slow = true
	l.AddRegistrar("consul", reg)
	res := runAsync(l)
	<-reg.synced
	start := time.Now()
	_ = l.Drain("test")
	if err := waitResult(t, res, 3*time.Second); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("drain took %v with a stuck registry; bound was 200ms", d)
	}
	tl, _ := l.Timeline()
	if tl.Steps[1].Name != StepDeregistered || !strings.Contains(tl.Steps[1].Err, "unreachable") {
		t.Fatalf("deregistration failure not recorded: %+v", tl.Steps)
	}
	st := l.Status()
	if len(st.Registry) != 1 || st.Registry[0].Err == "" || st.Registry[0].LastOp != "deregister" ||
		st.Registry[0].Name != "consul" {
		t.Fatalf("registry status %+v", st.Registry)
	}
	if d, _ := st.Registry[0].Detail.(map[string]string); d["id"] != "fake-1" {
		t.Fatalf("registrar detail %#v, want the StatusDetailer's value", st.Registry[0].Detail)
	}
	if n := strings.Count(tl.Steps[1].Err, "consul:"); n != 1 {
		t.Fatalf("step error %q names the registrar %d times", tl.Steps[1].Err, n)
	}
}

func TestServeFailureDrainsAndExits1(t *testing.T) {
	l := newTest(t, Options{Timings: fastTimings(0, 0, 0)})
	srv := newFakeServer(&recorder{}, "http")
	srv.serveErr = errors.New("address already in use")
	l.AddServer("http", srv)
	err := waitResult(t, runAsync(l), 5*time.Second)
	if ExitCode(err) != 1 || !strings.Contains(err.Error(), "address already in use") {
		t.Fatalf("Run: %v", err)
	}
}

func TestRunTwice(t *testing.T) {
	l := newTest(t, Options{Timings: fastTimings(0, 0, 0)})
	res := runAsync(l)
	waitState(t, l, Ready)
	if err := l.Run(context.Background()); err == nil {
		t.Fatal("second Run must fail")
	}
	_ = l.Drain("test")
	if err := waitResult(t, res, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestContextCancelDrains(t *testing.T) {
	l := newTest(t, Options{Timings: fastTimings(0, 0, 0)})
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan error, 1)
	go func() { res <- l.Run(ctx) }()
	waitState(t, l, Ready)
	cancel()
	if err := waitResult(t, res, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestSecondSignalForcesExit sends real signals to this process. SIGUSR1
// keeps SIGTERM's default action away from the test binary.
func TestSecondSignalForcesExit(t *testing.T) {
	exited := make(chan int, 1)
	l := newTest(t, Options{Timings: fastTimings(time.Second, 0, time.Second), Signals: []os.Signal{syscall.SIGUSR1}, exit: func(code int) { exited <- code }})
	l.AddServer("http", newFakeServer(&recorder{}, "http"))
	res := runAsync(l)
	waitState(t, l, Ready) // the handler is installed before warm-up
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	waitState(t, l, Draining)
	second := time.Now()
	_ = syscall.Kill(syscall.Getpid(), syscall.SIGUSR1)
	select {
	case code := <-exited:
		if code != 128+int(syscall.SIGUSR1) {
			t.Fatalf("exit code %d, want %d", code, 128+int(syscall.SIGUSR1))
		}
		if d := time.Since(second); d > 500*time.Millisecond {
			t.Fatalf("forced exit %v after the second signal", d)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("second signal did not force an exit")
	}
	if err := waitResult(t, res, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

func TestChecksHysteresis(t *testing.T) {
	c := &counter{}
	ejectedAt, restoredAt := make(chan int64, 1), make(chan int64, 1)
	obs := &observer{onT: func(tr Transition) {
		if tr.Cause != CauseChecks {
			return
		}
		if tr.To == Ejected {
			ejectedAt <- c.calls.Load()
		} else {
			restoredAt <- c.calls.Load()
		}
	}}
	l := newTest(t, Options{Timings: fastTimings(0, 0, 0), Checks: budget.CheckOptions{Interval: 20 * time.Millisecond, Timeout: 10 * time.Millisecond, FailureThreshold: 3, SuccessThreshold: 5}, Observers: []Observer{obs}})
	l.AddCheck(c.Name(), c.Check)
	res := runAsync(l)
	waitState(t, l, Ready)

	before := c.calls.Load()
	c.block.Store(true) // a check that hangs fails at its timeout
	if n := recv(t, ejectedAt) - before; n < 3 || n > 4 {
		t.Fatalf("ejected after %d failed checks, want 3", n)
	}
	st := l.Status()
	if st.Checks[0].OK || st.Checks[0].Err == "" {
		t.Fatalf("cached result %+v", st.Checks[0])
	}
	before = c.calls.Load()
	c.block.Store(false)
	if n := recv(t, restoredAt) - before; n < 5 || n > 6 {
		t.Fatalf("restored after %d passed checks, want 5", n)
	}

	// An operator eject is not undone by passing checks.
	if err := l.Eject("operator"); err != nil {
		t.Fatal(err)
	}
	for target := c.calls.Load() + 8; c.calls.Load() < target; {
		waitCalls(t, c, target)
	}
	if l.State() != Ejected {
		t.Fatalf("checks restored an operator eject: %s", l.State())
	}
	_ = l.Drain("test")
	if err := waitResult(t, res, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

func waitCalls(t *testing.T, c *counter, n int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for c.calls.Load() < n {
		if time.Now().After(deadline) {
			t.Fatalf("only %d check calls", c.calls.Load())
		}
		time.Sleep(5 * time.Millisecond) // poll with a deadline
	}
}

func recv(t *testing.T, ch <-chan int64) int64 {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("no transition by the readiness checks")
		return 0
	}
}

// TestNoSignals: an empty Options.Signals handles nothing, so the runtime's own signals
// (SIGURG for preemption) never count as a first or second signal.
func TestNoSignals(t *testing.T) {
	exited := make(chan int, 1)
	l := newTest(t, Options{Timings: fastTimings(0, 0, 0), Signals: []os.Signal{}, exit: func(c int) { exited <- c }})
	res := runAsync(l)
	waitState(t, l, Ready)
	for i := 0; i < 3; i++ {
		_ = syscall.Kill(syscall.Getpid(), syscall.SIGURG)
	}
	_ = l.Drain("test") // the only way in
	if err := waitResult(t, res, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-exited:
		t.Fatalf("forced exit %d without any handled signal", c)
	default:
	}
	if tl, _ := l.Timeline(); tl.Reason != "test" {
		t.Fatalf("drain reason %q: a SIGURG started the drain", tl.Reason)
	}
}

func TestRestoreNeverEndsWarmup(t *testing.T) {
	l := newTest(t, Options{})
	var te *transitionError
	if err := l.Restore("operator"); !errors.As(err, &te) || te.from != Starting {
		t.Fatalf("Restore in STARTING: %v, want a STARTING -> READY transitionError", err)
	}
	if l.State() != Starting {
		t.Fatalf("Restore moved STARTING to %s", l.State())
	}
}

// TestHungCheckDoesNotDelayDeregistration: a readiness check that ignores its
// context must not eat the registrars' deregistration budget.
func TestHungCheckDoesNotDelayDeregistration(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	hung := func(context.Context) error {
		select {
		case entered <- struct{}{}:
		default:
		}
		<-release // ignores its context, like a Ping without a timeout
		return nil
	}
	rec := &recorder{}
	reg := newFakeRegistrar(rec)
	l := newTest(t, Options{Timings: fastTimings(0, 0, time.Second), DeregisterTimeout: time.Second, Checks: budget.CheckOptions{Interval: 10 * time.Millisecond, Timeout: 5 * time.Millisecond, FailureThreshold: 999, SuccessThreshold: 1000}})
	l.AddCheck("ping", hung)
	l.AddRegistrar("fake", reg)
	res := runAsync(l)
	<-reg.synced
	<-entered
	_ = l.Drain("test")
	err := waitResult(t, res, 5*time.Second)
	close(release)
	if err != nil {
		t.Fatal(err)
	}
	if left := time.Duration(reg.deregisterBudget.Load()); left < 500*time.Millisecond {
		t.Fatalf("Deregister got %v before its deadline, want about 1s", left)
	}
}

func TestDeregisterBudgetWithoutWindow(t *testing.T) {
	tm := fastTimings(0, 0, 0)
	tm.DrainTimeout, tm.StopTimeout, tm.GracePeriod = 2*time.Second, time.Second, 4*time.Second
	l := newTest(t, Options{Timings: tm}) // fits without a registry
	l.AddRegistrar("consul", newFakeRegistrar(&recorder{}))
	err := l.Run(context.Background())
	var re *budget.RangeError
	if ExitCode(err) != 1 || !errors.As(err, &re) || re.Key != "registry.deregister_timeout" {
		t.Fatalf("Run: %v, want a registry.deregister_timeout budget.RangeError at start", err)
	}
	if l.State() != Starting {
		t.Fatalf("state %s: nothing may start", l.State())
	}
}

// TestCutCountingNothingStillExits1: a server that needed ForceClose exits 1
// even when it could not count what it cut.
func TestCutCountingNothingStillExits1(t *testing.T) {
	tm := fastTimings(0, 0, 0)
	tm.DrainTimeout = 100 * time.Millisecond
	l := newTest(t, Options{Timings: tm})
	srv := newFakeServer(&recorder{}, "http")
	srv.stuck = true // cut stays 0
	l.AddServer("http", srv)
	res := runAsync(l)
	waitState(t, l, Ready)
	_ = l.Drain("test")
	if err := waitResult(t, res, 5*time.Second); ExitCode(err) != 1 {
		t.Fatalf("Run: %v, want exit code 1", err)
	}
	if tl, _ := l.Timeline(); !slices.ContainsFunc(tl.Steps, func(s Step) bool { return s.Name == StepForceClosed }) {
		t.Fatalf("no force_closed step: %+v", tl.Steps)
	}
}

// TestOperatorEjectOfCheckEjectedReachesRegistrars: Consul must switch from
// a critical check to maintenance mode.
func TestOperatorEjectOfCheckEjectedReachesRegistrars(t *testing.T) {
	c := &counter{}
	rec := &recorder{}
	reg := newFakeRegistrar(rec)
	l := newTest(t, Options{Timings: fastTimings(0, 0, 0), DeregisterTimeout: time.Second, Checks: budget.CheckOptions{Interval: 10 * time.Millisecond, Timeout: 5 * time.Millisecond, FailureThreshold: 1, SuccessThreshold: 2}})
	l.AddCheck(c.Name(), c.Check)
	l.AddRegistrar("fake", reg)
	res := runAsync(l)
	waitState(t, l, Ready)
	c.fail.Store(true)
	waitState(t, l, Ejected)
	if err := l.Eject("operator"); err != nil {
		t.Fatal(err)
	}
	c.fail.Store(false)
	deadline := time.Now().Add(5 * time.Second)
	for !slices.Contains(rec.list(), "reg.sync.EJECTED.operator") {
		if time.Now().After(deadline) {
			t.Fatalf("registrar never saw the operator eject: %v", rec.list())
		}
		time.Sleep(5 * time.Millisecond) // poll with a deadline
	}
	waitCalls(t, c, c.calls.Load()+5)
	if l.State() != Ejected {
		t.Fatalf("passing checks undid an operator eject: %s", l.State())
	}
	_ = l.Drain("test")
	if err := waitResult(t, res, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

// TestPreStopWaitsForSignal: after a drain whose window a preStop hook waited
// for, Run stays in DRAINING until the kubelet's SIGTERM, then returns.
func TestPreStopWaitsForSignal(t *testing.T) {
	l := newTest(t, Options{Timings: fastTimings(100*time.Millisecond, 0, 100*time.Millisecond), Signals: []os.Signal{syscall.SIGUSR2}})
	l.AddServer("http", newFakeServer(&recorder{}, "http"))
	res := runAsync(l)
	waitState(t, l, Ready)
	_ = l.Drain("POST /drain?wait=propagation")
	if err := l.WaitPropagation(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The hook has returned; its exec may still be exiting. Run must not
	// end the process yet, even though the drain itself is over.
	deadline := time.Now().Add(5 * time.Second)
	for {
		if tl, _ := l.Timeline(); slices.ContainsFunc(tl.Steps, func(s Step) bool { return s.Name == StepStopHooksDone }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the drain did not finish")
		}
		time.Sleep(5 * time.Millisecond) // poll with a deadline
	}
	select {
	case err := <-res:
		t.Fatalf("Run returned (%v) before the signal that follows the preStop hook", err)
	case <-time.After(200 * time.Millisecond):
	}
	if l.State() != Draining {
		t.Fatalf("state %s while waiting for the signal, want DRAINING (liveness passes)", l.State())
	}
	sent := time.Now()
	_ = syscall.Kill(syscall.Getpid(), syscall.SIGUSR2)
	if err := waitResult(t, res, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(sent); d > time.Second {
		t.Fatalf("Run returned %v after the signal", d)
	}
}

// seqObserver records transitions and steps in one sequence; slow widens the
// window in which a step could overtake the DRAINING transition.
type seqObserver struct {
	mu   sync.Mutex
	seq  []string
	slow time.Duration
}

func (o *seqObserver) OnTransition(t Transition) {
	if t.To == Draining {
		time.Sleep(o.slow) // a slow observer, not synchronisation
	}
	o.mu.Lock()
	o.seq = append(o.seq, "to:"+t.To.String())
	o.mu.Unlock()
}
func (o *seqObserver) OnDrainStep(_ Timeline, s Step) {
	o.mu.Lock()
	o.seq = append(o.seq, s.Name)
	o.mu.Unlock()
}

func TestObserversSeeDrainInOrder(t *testing.T) {
	for _, served := range []bool{true, false} {
		obs := &seqObserver{slow: 50 * time.Millisecond}
		l := newTest(t, Options{Timings: fastTimings(0, 0, 0), Observers: []Observer{obs}})
		started := make(chan struct{})
		if served {
			l.AddServer("http", newFakeServer(&recorder{}, "http"))
		} else {
			l.OnWarmup("slow", func(ctx context.Context) error { close(started); <-ctx.Done(); return ctx.Err() })
		}
		res := runAsync(l)
		if served {
			waitState(t, l, Ready)
		} else {
			<-started
		}
		_ = l.Drain("test")
		if err := waitResult(t, res, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		obs.mu.Lock()
		seq := append([]string(nil), obs.seq...)
		obs.mu.Unlock()
		d, s := slices.Index(seq, "to:DRAINING"), slices.Index(seq, "to:STOPPED")
		if d < 0 || s != len(seq)-1 || slices.Index(seq, StepNotReady) < d {
			t.Fatalf("served=%v: observer sequence %v: want DRAINING before every step, STOPPED last", served, seq)
		}
	}
}

// TestPreStopWaiterMarkedOnEntry: the wait for the kubelet's SIGTERM must not
// depend on the preStop caller running after the window ends (it may be
// scheduled late, or its hook may have timed out): calling WaitPropagation is
// what counts.
func TestPreStopWaiterMarkedOnEntry(t *testing.T) {
	l := newTest(t, Options{Timings: fastTimings(100*time.Millisecond, 0, 100*time.Millisecond), Signals: []os.Signal{syscall.SIGUSR2}})
	l.AddServer("http", newFakeServer(&recorder{}, "http"))
	res := runAsync(l)
	waitState(t, l, Ready)
	_ = l.Drain("POST /drain?wait=propagation")
	gaveUp, cancel := context.WithCancel(context.Background())
	cancel() // the hook's caller is gone before the window ends
	if err := l.WaitPropagation(gaveUp); err == nil {
		t.Fatal("WaitPropagation with a cancelled context returned nil")
	}
	<-l.phase.Done(phaseWindowEnded)
	select {
	case err := <-res:
		t.Fatalf("Run returned (%v) without waiting for the signal that follows the hook", err)
	case <-time.After(500 * time.Millisecond):
	}
	_ = syscall.Kill(syscall.Getpid(), syscall.SIGUSR2)
	if err := waitResult(t, res, 2*time.Second); err != nil {
		t.Fatal(err)
	}
}
