package lifecycle

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drainkit/drainkit/internal/testlog"
)

// sendEvery reports an arrival of c every `every` until stop (synctest's
// clock), and returns how many it sent.
func sendEvery(l *Lifecycle, c Caller, every time.Duration, stop time.Time) int {
	tick := time.NewTicker(every)
	defer tick.Stop()
	n := 0
	for now := range tick.C {
		if now.After(stop) {
			return n
		}
		hooks(l).Arrived(c)
		n++
	}
	return n
}

// A slow caller (every 400 ms) and a fast one (every 5 ms) send before the
// drain and go on after it, the fast one for 1 s, the slow one for 3 s. The
// instance-wide quiet rule (quiet 100 ms, min 0) alone would end the window
// 100 ms after the last arrival, while the slow caller is still due (its
// next request is 400 ms away). The window must wait dueFactor of its usual
// gaps after its last request, exactly: synctest's clock.
func TestWindowWaitsForEachCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const slowGap, quiet = 400 * time.Millisecond, 100 * time.Millisecond
		l := newTest(t, Options{Timings: fastTimings(0, quiet, 10*time.Second), Signals: []os.Signal{}})
		l.AddServer("http", newFakeServer(&recorder{}, "http"))
		res := runAsync(l)
		waitState(t, l, Ready)
		start := time.Now()
		// 1 ms off the slow caller's ticks, so that none of them races the
		// drain's start.
		drainAt := start.Add(2*time.Second + time.Millisecond)
		var callers sync.WaitGroup
		callers.Go(func() { sendEvery(l, caller("10.0.0.1", "slow"), slowGap, drainAt.Add(3*time.Second)) })
		callers.Go(func() {
			sendEvery(l, caller("10.0.0.2", "fast"), 5*time.Millisecond, drainAt.Add(time.Second))
		})
		time.Sleep(time.Until(drainAt))
		if err := l.Drain("test"); err != nil {
			t.Fatal(err)
		}
		callers.Wait()
		if err := waitResult(t, res, 30*time.Second); err != nil {
			t.Fatal(err)
		}
		tl, _ := l.Timeline()
		end, _ := tl.Offset(StepWindowEnded)
		// The slow caller's last request is the last late arrival.
		if want := tl.LastLateArrival + dueFactor*slowGap; end != want {
			t.Fatalf("window ended at %v; last late arrival (the slow caller's) %v: want %v (%d of its %v gaps after it)",
				end, tl.LastLateArrival, want, dueFactor, slowGap)
		}
	})
}

// Callers seen once have no usual gap: they wait quiet, as the instance-wide
// rule does; callers silent long before the drain do not hold it at all.
func TestCallerWithoutGapWaitsQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newTest(t, Options{Timings: fastTimings(0, 300*time.Millisecond, 10*time.Second), Signals: []os.Signal{}})
		l.AddServer("http", newFakeServer(&recorder{}, "http"))
		res := runAsync(l)
		waitState(t, l, Ready)
		old := caller("10.0.0.3", "gone")
		hooks(l).Arrived(old)
		time.Sleep(time.Second)
		hooks(l).Arrived(old) // usual gap 1 s; due until 3 s after this
		time.Sleep(5 * time.Second)
		_ = l.Drain("test")
		time.Sleep(200 * time.Millisecond)
		hooks(l).Arrived(caller("10.0.0.4", "once"))
		if err := waitResult(t, res, 30*time.Second); err != nil {
			t.Fatal(err)
		}
		tl, _ := l.Timeline()
		end, _ := tl.Offset(StepWindowEnded)
		if end != 500*time.Millisecond {
			t.Fatalf("window ended at %v, want 500ms (quiet after the one late arrival)", end)
		}
	})
}

// The window reaches propagation.max while a slow caller is still due: the
// warning names it (IP, identity, usual gap, last seen before the end) and
// the figures that would have covered it.
func TestOverrunWarningNamesCallers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger, logs := testlog.New(t, "lifecycle log")
		const max = 2 * time.Second
		l := newTest(t, Options{Timings: fastTimings(0, 100*time.Millisecond, max), Signals: []os.Signal{}, Logger: logger})
		l.AddServer("http", newFakeServer(&recorder{}, "http"))
		res := runAsync(l)
		waitState(t, l, Ready)
		slow := caller("10.0.0.1", "spring-cloud-loadbalancer")
		drainAt := time.Now().Add(2*time.Second + time.Millisecond)
		var callers sync.WaitGroup
		callers.Go(func() { sendEvery(l, slow, 500*time.Millisecond, drainAt.Add(5*time.Second)) })
		time.Sleep(time.Until(drainAt))
		_ = l.Drain("test")
		if err := waitResult(t, res, 30*time.Second); err != nil {
			t.Fatal(err)
		}
		callers.Wait()
		tl, _ := l.Timeline()
		if end, _ := tl.Offset(StepWindowEnded); end != max {
			t.Fatalf("window ended at %v, want propagation.max %v", end, max)
		}
		out := logs.String()
		var line string
		for l := range strings.Lines(out) {
			if strings.Contains(l, "ended at propagation.max") {
				line = l
			}
		}
		// Last request at 1999 ms (the tick at 4000 ms from start), 1 ms
		// before the end; due until 1999 + 1500 = 3499 ms: max >= 4s.
		for _, want := range []string{
			`ip=10.0.0.1 identity=\"spring-cloud-loadbalancer\" usual_gap_ms=500 last_seen_ms_before_end=1`,
			"callers_due=1", "propagation_max_at_least_ms=4000", "grace_period_at_least_ms=",
			"termination_grace_period_at_least_s=",
		} {
			if !strings.Contains(line, want) {
				t.Errorf("warning %q lacks %q\nlog:\n%s", line, want, out)
			}
		}
	})
}

// A caller the window has no room for (the table is full) is counted
// instance-wide, and the window's end says so once.
func TestCallerTableOverflow(t *testing.T) {
	var tb callerTable
	tb.init(time.Now(), time.Second)
	now := time.Now()
	for i := range callerSlots + callerProbe {
		tb.record(Caller{Identity: strings.Repeat("x", i)}, now, true)
	}
	if !tb.overflow.Load() {
		t.Fatal("a full table did not note its overflow")
	}
	// Forgotten callers give their slots up.
	later := now.Add(forgetAfter + time.Second)
	tb.overflow.Store(false)
	for i := range callerSlots / 2 {
		tb.record(Caller{Identity: "new" + strings.Repeat("y", i)}, later, true)
	}
	if tb.overflow.Load() {
		t.Fatal("callers silent for longer than forgetAfter kept their slots")
	}
}

func TestArrivedWithCallersDoesNotAllocate(t *testing.T) {
	l := newTest(t, Options{})
	callers := make([]Caller, 64)
	for i := range callers {
		callers[i] = caller("10.1.2."+strconv.Itoa(i), strings.Repeat("a", i))
	}
	i := 0
	f := func() { hooks(l).Arrived(callers[i%len(callers)]); i++ }
	if n := testing.AllocsPerRun(1000, f); n != 0 {
		t.Fatalf("Arrived allocates %v per call before the drain", n)
	}
	_ = l.Drain("test")
	if n := testing.AllocsPerRun(1000, f); n != 0 {
		t.Fatalf("Arrived allocates %v per call during the drain", n)
	}
}

// Issue 32, drain time toward the evidence: with propagation.min the
// default (Options.MinIsDefault), a confirmed deregistration and every
// caller moved end the window before min; a min the operator set holds it.
// A slow caller (every 400 ms) sends for 2 s before the drain and 1 s after.
func TestConfirmedDeregistrationWaivesDefaultMin(t *testing.T) {
	const slowGap, min = 400 * time.Millisecond, 5 * time.Second
	for _, minIsDefault := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			l := newTest(t, Options{Timings: fastTimings(min, 100*time.Millisecond, 10*time.Second), Signals: []os.Signal{},
				MinIsDefault: minIsDefault})
			rec := &recorder{}
			reg := newFakeRegistrar(rec)
			l.AddServer("http", newFakeServer(rec, "http"))
			l.AddRegistrar("reg", reg)
			res := runAsync(l)
			<-reg.synced
			drainAt := time.Now().Add(2*time.Second + time.Millisecond)
			var callers sync.WaitGroup
			callers.Go(func() { sendEvery(l, caller("10.0.0.1", "slow"), slowGap, drainAt.Add(time.Second)) })
			time.Sleep(time.Until(drainAt))
			_ = l.Drain("test")
			callers.Wait()
			if err := waitResult(t, res, 30*time.Second); err != nil {
				t.Fatal(err)
			}
			tl, _ := l.Timeline()
			end, _ := tl.Offset(StepWindowEnded)
			want := min // min counts from the deregistration, at t0 on synctest's clock
			if minIsDefault {
				want = tl.LastLateArrival + dueFactor*slowGap // the slow caller moved
			}
			if end != want {
				t.Fatalf("MinIsDefault %v: window ended at %v, want %v (last late arrival %v)", minIsDefault, end, want, tl.LastLateArrival)
			}
		})
	}
}

// More callers than the table holds: the window's end says so, once.
func TestCallerOverflowLoggedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logger, logs := testlog.New(t, "lifecycle log")
		l := newTest(t, Options{Timings: fastTimings(0, 100*time.Millisecond, time.Second), Signals: []os.Signal{}, Logger: logger})
		l.AddServer("http", newFakeServer(&recorder{}, "http"))
		res := runAsync(l)
		waitState(t, l, Ready)
		for i := range 2 * callerSlots {
			hooks(l).Arrived(Caller{Identity: "consumer-" + strconv.Itoa(i)})
		}
		_ = l.Drain("test")
		if err := waitResult(t, res, 30*time.Second); err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(logs.String(), "more callers than the propagation window's caller table holds"); n != 1 {
			t.Fatalf("overflow logged %d times, want once:\n%s", n, logs)
		}
	})
}
