package lifecycle

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestStateString(t *testing.T) {
	want := map[State]string{Starting: "STARTING", Ready: "READY", Ejected: "EJECTED", Draining: "DRAINING", Stopped: "STOPPED", State(9): "State(9)"}
	for s, w := range want {
		if got := s.String(); got != w {
			t.Errorf("State(%d).String() = %q, want %q", int(s), got, w)
		}
	}
}

// TestTransitionTable checks every (from, to) pair against DESIGN.md
// section 1: legal moves succeed, all others fail naming both states.
func TestTransitionTable(t *testing.T) {
	allowed := map[[2]State]bool{
		{Starting, Ready}: true, {Starting, Draining}: true, {Starting, Stopped}: true,
		{Ready, Ejected}: true, {Ready, Draining}: true,
		{Ejected, Ready}: true, {Ejected, Draining}: true,
		{Draining, Stopped}: true,
	}
	all := []State{Starting, Ready, Ejected, Draining, Stopped}
	for _, from := range all {
		for _, to := range all {
			l := newTest(t, Options{})
			l.state.Store(int32(from))
			_, err := l.transition(to, CauseOperator, "test", nil)
			if allowed[[2]State{from, to}] {
				if err != nil {
					t.Errorf("%s -> %s: unexpected error %v", from, to, err)
				}
				if l.State() != to {
					t.Errorf("%s -> %s: state is %s", from, to, l.State())
				}
				continue
			}
			if !errors.Is(err, ErrIllegalTransition) {
				t.Errorf("%s -> %s: got %v, want ErrIllegalTransition", from, to, err)
				continue
			}
			if !strings.Contains(err.Error(), from.String()) || !strings.Contains(err.Error(), to.String()) {
				t.Errorf("%s -> %s: error %q does not name both states", from, to, err)
			}
			if l.State() != from {
				t.Errorf("%s -> %s: rejected move changed state to %s", from, to, l.State())
			}
		}
	}
}

func TestDrainingToReadyIsAnError(t *testing.T) {
	l := newTest(t, Options{})
	mustMove(t, l, Ready)
	if err := l.Drain("test"); err != nil {
		t.Fatal(err)
	}
	err := l.Restore("operator")
	var te *transitionError
	if !errors.As(err, &te) || te.from != Draining || te.to != Ready || !errors.Is(err, ErrIllegalTransition) {
		t.Fatalf("Restore while draining: got %v, want a DRAINING -> READY transitionError", err)
	}
	if err := l.Drain("again"); err != nil {
		t.Fatalf("second Drain must join, got %v", err)
	}
}

func TestEjectRestore(t *testing.T) {
	l := newTest(t, Options{})
	if err := l.Eject("op"); err == nil {
		t.Fatal("Eject in STARTING must fail")
	}
	mustMove(t, l, Ready)
	if err := l.Eject("op"); err != nil {
		t.Fatal(err)
	}
	if l.State() != Ejected {
		t.Fatalf("state %s", l.State())
	}
	if err := l.Restore("op"); err != nil {
		t.Fatal(err)
	}
	if l.State() != Ready {
		t.Fatalf("state %s", l.State())
	}
	if err := l.Restore("op"); err != nil {
		t.Fatalf("Restore of a READY instance must be a no-op, got %v", err)
	}
	// Ejected by checks: Restore refuses, Eject converts to operator eject.
	if _, err := l.transition(Ejected, CauseChecks, "checks", nil); err != nil {
		t.Fatal(err)
	}
	if err := l.Restore("op"); !errors.Is(err, ErrIllegalTransition) || !strings.Contains(err.Error(), "ejected by readiness checks") {
		t.Fatalf("Restore after a checks eject: got %v", err)
	}
	if err := l.Eject("op"); err != nil {
		t.Fatal(err)
	}
	if err := l.Restore("op"); err != nil {
		t.Fatalf("Restore after an operator eject: %v", err)
	}
}

// TestSubscribersNeverBlock: a subscriber that never reads does not block
// transitions, and a reader sees the latest value.
func TestSubscribersNeverBlock(t *testing.T) {
	l := newTest(t, Options{})
	_, stopIdle := l.Subscribe() // never read
	defer stopIdle()
	reader, stopReader := l.Subscribe()
	defer stopReader()
	first := <-reader
	if first.To != Starting {
		t.Fatalf("first value %v, want the current state", first)
	}
	mustMove(t, l, Ready)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 1000; i++ {
			if err := l.Eject("op"); err != nil {
				t.Error(err)
				return
			}
			if err := l.Restore("op"); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("transitions blocked on a subscriber that never reads")
	}
	got := <-reader
	if got.To != Ready || got.From != Ejected {
		t.Fatalf("latest value %v, want EJECTED -> READY", got)
	}
	select {
	case extra := <-reader:
		t.Fatalf("more than one buffered value: %v", extra)
	default:
	}
}

func TestArrivedCountsOnlyAfterDrainStart(t *testing.T) {
	l := newTest(t, Options{})
	mustMove(t, l, Ready)
	for i := 0; i < 5; i++ {
		hooks(l).Arrived(Caller{})
	}
	if _, ok := l.Timeline(); ok {
		t.Fatal("timeline before the drain")
	}
	if err := l.Drain("test"); err != nil {
		t.Fatal(err)
	}
	hooks(l).Arrived(Caller{})
	hooks(l).Arrived(Caller{})
	tl, ok := l.Timeline()
	if !ok || tl.LateArrivals != 2 || tl.LastLateArrival <= 0 {
		t.Fatalf("timeline %+v ok=%v, want 2 late arrivals with an offset", tl, ok)
	}
}

func TestArrivedDoesNotAllocate(t *testing.T) {
	l := newTest(t, Options{})
	if n := testing.AllocsPerRun(1000, func() { hooks(l).Arrived(benchCaller) }); n != 0 {
		t.Fatalf("Arrived allocates %v per call before the drain", n)
	}
	_ = l.Drain("test")
	if n := testing.AllocsPerRun(1000, func() { hooks(l).Arrived(benchCaller) }); n != 0 {
		t.Fatalf("Arrived allocates %v per call during the drain", n)
	}
}

// BenchmarkArrived measures the request path's report (ns/op, 0 allocs/op):
// one caller, and 64 callers (each its own slot in the caller table).
func BenchmarkArrived(b *testing.B) {
	l, _ := New(Options{Logger: discard()})
	callers := make([]Caller, 64)
	for i := range callers {
		callers[i] = caller(fmt.Sprintf("10.1.2.%d", i), "Go-http-client/1.1")
	}
	run := func(name string, many bool) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				i := 0
				for pb.Next() {
					c := benchCaller
					if many {
						c = callers[i%len(callers)]
						i++
					}
					hooks(l).Arrived(c)
				}
			})
		})
	}
	run("ready", false)
	run("ready/64callers", true)
	_ = l.Drain("bench")
	run("draining", false)
	run("draining/64callers", true)
}
