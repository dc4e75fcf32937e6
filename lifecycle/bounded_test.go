package lifecycle_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/lifecycle/lifecycletest"
)

// stubbornRegistrar's calls ignore their context, as a registrar built on a
// client without deadlines, or a registry that wrote the instance but answers
// slowly: a blocked call returns only when the test closes release.
type stubbornRegistrar struct {
	block   map[string]bool // by call: "sync", "deregister", "confirm"
	release chan struct{}
	syncing chan struct{} // closed when the first Sync began
	once    sync.Once
	mu      sync.Mutex
	calls   []string
	blocked int // calls blocked now
}

func newStubborn(blocking ...string) *stubbornRegistrar {
	r := &stubbornRegistrar{block: map[string]bool{}, release: make(chan struct{}), syncing: make(chan struct{})}
	for _, c := range blocking {
		r.block[c] = true
	}
	return r
}

func (r *stubbornRegistrar) call(name string) error {
	r.mu.Lock()
	r.calls = append(r.calls, name)
	block := r.block[strings.Fields(name)[0]]
	if block {
		r.blocked++
	}
	r.mu.Unlock()
	if block {
		<-r.release
		r.mu.Lock()
		r.blocked--
		r.mu.Unlock()
	}
	return nil
}

func (r *stubbornRegistrar) Sync(_ context.Context, t lifecycle.Transition) error {
	r.once.Do(func() { close(r.syncing) })
	return r.call("sync " + t.To.String())
}
func (r *stubbornRegistrar) Deregister(context.Context) error { return r.call("deregister") }
func (r *stubbornRegistrar) Confirm(context.Context) error    { return r.call("confirm") }

func (r *stubbornRegistrar) count(name string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.calls {
		if c == name {
			n++
		}
	}
	return n
}

// unblock releases the blocked calls and waits up to 5s for them to return,
// so that nothing of the test outlives it (goleak).
func (r *stubbornRegistrar) unblock(t *testing.T) {
	close(r.release)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) { // a poll with a deadline
		r.mu.Lock()
		n := r.blocked
		r.mu.Unlock()
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d calls still blocked 5s after their release", n)
		}
	}
}

// afterStop is an Observer that counts drain steps reported after STOPPED;
// ready is closed on READY.
type afterStop struct {
	ready   chan struct{}
	stopped atomic.Bool
	late    atomic.Int64
}

func newAfterStop() *afterStop { return &afterStop{ready: make(chan struct{})} }

func (o *afterStop) OnTransition(t lifecycle.Transition) {
	switch t.To {
	case lifecycle.Ready:
		close(o.ready)
	case lifecycle.Stopped:
		o.stopped.Store(true)
	}
}
func (o *afterStop) OnDrainStep(lifecycle.Timeline, lifecycle.Step) {
	if o.stopped.Load() {
		o.late.Add(1)
	}
}

// jsonLog returns a JSON logger into a buffer, and a function returning the
// lines whose msg starts with prefix, decoded.
func jsonLog(t *testing.T) (*slog.Logger, func(prefix string) []map[string]any) {
	_, buf := testlog.New(t, "lifecycle log") // printed when the test fails
	lines := func(prefix string) []map[string]any {
		var out []map[string]any
		for _, line := range strings.Split(buf.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(line), &m) == nil && strings.HasPrefix(m["msg"].(string), prefix) {
				out = append(out, m)
			}
		}
		return out
	}
	return slog.New(slog.NewJSONHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), lines
}

// abandoned reports whether lines hold an abandonment of participant's call.
func abandoned(lines []map[string]any, participant, call string) bool {
	for _, m := range lines {
		if m["participant"] == participant && m["call"] == call {
			if _, ok := m["waited_ms"].(float64); ok {
				return true
			}
		}
	}
	return false
}

// shortTimings: window 100ms..1s, no quiet, drain 1s, stop 1s, grace 4s.
func shortTimings() budget.Timings {
	return budget.Timings{WarmupTimeout: 5 * time.Second, PropagationMin: 100 * time.Millisecond,
		PropagationMax: time.Second, DrainTimeout: time.Second, StopTimeout: time.Second, GracePeriod: 4 * time.Second}
}

const abandonMsg = "drainkit: participant call abandoned"

// TestSyncRunningAtDrainStartIsDeregistered (issue 18 item 2): a registrar
// whose first Sync is still running when the drain starts (it may have
// written the instance) is deregistered all the same, once; the Sync is
// abandoned after the lifecycle's wait, and that is logged.
func TestSyncRunningAtDrainStartIsDeregistered(t *testing.T) {
	logger, lines := jsonLog(t)
	reg := newStubborn("sync")
	defer reg.unblock(t)
	lc := newLifecycle(t, lifecycle.Options{Timings: shortTimings(), Logger: logger})
	lc.AddServer("fake", lifecycletest.NewServer())
	lc.AddRegistrar("slow", reg)
	done := runAsync(context.Background(), lc)
	<-reg.syncing
	if err := lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	if err := awaitRun(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if n := reg.count("deregister"); n != 1 {
		t.Errorf("Deregister called %d times, want 1: a registrar whose Sync was called must be deregistered", n)
	}
	if !abandoned(lines(abandonMsg), "slow", "Sync") {
		t.Errorf("no abandonment logged for slow's Sync")
	}
	if tl, _ := lc.Timeline(); !hasStep(tl, lifecycle.StepDeregistered) || !hasStep(tl, lifecycle.StepConfirmed) {
		t.Errorf("timeline lacks deregistered or confirmed: %+v", tl.Steps)
	}
}

func hasStep(tl lifecycle.Timeline, name string) bool {
	_, ok := tl.Offset(name)
	return ok
}

// TestRegistrarIgnoringContextIsAbandoned (issue 18 item 3): Deregister and
// Confirm that ignore their context are abandoned at the lifecycle's own
// bounds (the deregistration bound, the window's end), each abandonment
// logged; the drain goes on and Run returns 0 well before the grace period,
// after the stop hooks ran, and no drain step comes after STOPPED even once
// the calls return. On synctest's clock: the bounds cost no real time.
func TestRegistrarIgnoringContextIsAbandoned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger, lines := jsonLog(t)
		reg := newStubborn("deregister", "confirm")
		obs := newAfterStop()
		tm := shortTimings()
		lc := newLifecycle(t, lifecycle.Options{Timings: tm, Logger: logger, Observers: []lifecycle.Observer{obs}})
		lc.AddServer("fake", lifecycletest.NewServer())
		lc.AddRegistrar("stubborn", reg)
		took, ranStopHooks, err := drainTimed(t, lc, reg.syncing)
		reg.unblock(t) // the abandoned calls return now
		if err != nil {
			t.Fatalf("Run: %v (after %s)", err, took)
		}
		// The window ends at max (1s): Deregister was abandoned there, Confirm
		// with the window; drain and stop take nothing here.
		if took > tm.PropagationMax+time.Second {
			t.Errorf("Run returned %s after the drain started; want about propagation.max %s", took, tm.PropagationMax)
		}
		if !ranStopHooks {
			t.Errorf("the stop hook had not run when Run returned")
		}
		for _, call := range []string{"Deregister", "Confirm"} {
			if !abandoned(lines(abandonMsg), "stubborn", call) {
				t.Errorf("no abandonment logged for %s", call)
			}
		}
		tl, _ := lc.Timeline()
		for _, s := range tl.Steps {
			if s.Name == lifecycle.StepDeregistered && !strings.Contains(s.Err, "abandoned") {
				t.Errorf("deregistered step %+v, want its abandonment", s)
			}
		}
		if n := obs.late.Load(); n != 0 {
			t.Errorf("%d drain steps reported after STOPPED", n)
		}
	})
}

// drainTimed adds a stop hook to lc, runs it, drains it once started is
// closed, and returns how long after the drain's start Run returned,
// whether the stop hook had run by then, and Run's result.
func drainTimed(t *testing.T, lc *lifecycle.Lifecycle, started <-chan struct{}) (took time.Duration, ranStopHooks bool, err error) {
	t.Helper()
	var stopped atomic.Bool
	lc.OnStop("flush", func(context.Context) error { stopped.Store(true); return nil })
	done := runAsync(context.Background(), lc)
	<-started
	start := time.Now()
	if err := lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	err = awaitRun(t, done)
	return time.Since(start), stopped.Load(), err
}

// stuckServer is a lifecycletest.Server whose AwaitIdle ignores its
// context until released.
type stuckServer struct {
	*lifecycletest.Server
	release chan struct{}
}

func (s *stuckServer) AwaitIdle(context.Context) error { <-s.release; return nil }

// TestServerIgnoringContextIsAbandoned (issue 18 item 3): an AwaitIdle that
// ignores drain.timeout is abandoned there: the rest is force-closed, the
// stop hooks run before Run returns (exit code 1, something was cut), long
// before the grace period ends. On synctest's clock.
func TestServerIgnoringContextIsAbandoned(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger, lines := jsonLog(t)
		obs := newAfterStop()
		tm := shortTimings()
		tm.PropagationMin, tm.PropagationMax = 0, 0
		lc := newLifecycle(t, lifecycle.Options{Timings: tm, Logger: logger, Observers: []lifecycle.Observer{obs}})
		srv := &stuckServer{lifecycletest.NewServer(), make(chan struct{})}
		lc.AddServer("stuck", srv)
		took, ranStopHooks, err := drainTimed(t, lc, obs.ready)
		close(srv.release)
		if lifecycle.ExitCode(err) != 1 {
			t.Fatalf("Run: %v, want exit code 1 (force-closed)", err)
		}
		if took > tm.DrainTimeout+time.Second {
			t.Errorf("Run returned %s after the drain started; want about drain.timeout %s", took, tm.DrainTimeout)
		}
		if !ranStopHooks {
			t.Errorf("the stop hook had not run when Run returned")
		}
		if !abandoned(lines(abandonMsg), "stuck", "AwaitIdle") {
			t.Errorf("no abandonment logged for AwaitIdle")
		}
		if n := obs.late.Load(); n != 0 {
			t.Errorf("%d drain steps reported after STOPPED", n)
		}
	})
}

// TestWindowEndingAtMaxWithArrivalsWarns (issue 18 item 9): requests that
// keep arriving on a real HTTP listener until propagation.max ends the
// window make the lifecycle warn with the arrival rate of the last second
// and the setting to raise; a window that ended quiet does not warn.
func TestWindowEndingAtMaxWithArrivalsWarns(t *testing.T) {
	for _, keepSending := range []bool{true, false} {
		logger, lines := jsonLog(t)
		tm := shortTimings()
		tm.PropagationMin, tm.PropagationQuiet, tm.PropagationMax = 200*time.Millisecond, 300*time.Millisecond, 1500*time.Millisecond
		tm.GracePeriod = 5 * time.Second
		lc := newLifecycle(t, lifecycle.Options{Timings: tm, Logger: logger})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lc.AddServer("http", httpdrain.New(&http.Server{Handler: http.NotFoundHandler(), ReadHeaderTimeout: time.Second}, ln))
		sub, unsubscribe := lc.Subscribe()
		// Cancelled once the window is over, as the kubelet's SIGTERM would
		// end the wait that follows a preStop hook's WaitPropagation.
		runCtx, sigterm := context.WithCancel(context.Background())
		done := runAsync(runCtx, lc)
		awaitState(t, sub, lifecycle.Ready)
		unsubscribe()
		if err := lc.Drain("test"); err != nil {
			t.Fatal(err)
		}
		sent := 0
		if keepSending { // every 20ms until the window ends: about 50/s
			client := &http.Client{Timeout: time.Second}
			for ctx := context.Background(); lc.WaitPropagation(expired(ctx)) != nil; sent++ {
				if resp, err := client.Get("http://" + ln.Addr().String() + "/"); err == nil {
					resp.Body.Close()
				}
				time.Sleep(20 * time.Millisecond) // the load's pace, not synchronisation
			}
		}
		sigterm()
		if err := awaitRun(t, done); err != nil {
			t.Fatalf("Run: %v", err)
		}
		warned := lines("drainkit: the propagation window ended at propagation.max")
		if !keepSending {
			if len(warned) != 0 {
				t.Errorf("a quiet window warned: %v", warned)
			}
			continue
		}
		if len(warned) != 1 {
			t.Fatalf("%d overrun warnings after %d requests, want 1", len(warned), sent)
		}
		w := warned[0]
		rate, _ := w["arrival_rate_per_s"].(float64)
		if rate < 5 || w["raise"] != "propagation.max" || w["propagation_max_ms"] != float64(1500) {
			t.Errorf("warning %v; want a rate of about 50/s (at least 5), raise propagation.max, propagation_max_ms 1500", w)
		}
		t.Logf("%d requests; warning: %v", sent, w)
	}
}

// expired returns a context that is already done: WaitPropagation then only
// says whether the window has ended.
func expired(parent context.Context) context.Context {
	ctx, cancel := context.WithCancel(parent)
	cancel()
	return ctx
}
