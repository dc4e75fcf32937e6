package consumer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/registry"
)

// Issue 18 item 6: ejection ends, staleness and slow-start ramps are
// readings of the monotonic clock. These tests run on synctest's fake clock,
// to the nanosecond and without sleeping; a wall-clock step cannot be made
// in a test (the fake clock moves wall and monotonic time together, and the
// machine's clock is shared), so what they pin down is the arithmetic on
// the monoClock readings that replaced the UnixNano values.

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// TestEjectionEndsOnMonotonicClock: an ejected instance is probed exactly
// BaseEjectionTime after its ejection, not a nanosecond earlier.
func TestEjectionEndsOnMonotonicClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := StaticInstances("orders", []registry.Instance{{ID: "a", Address: "127.0.0.1", Port: 1}, {ID: "b", Address: "127.0.0.1", Port: 2}})
		w, err := NewWatcher(WatcherOptions{Source: src, Service: "orders", Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		tr, err := NewTransport(w, "", Options{Logger: quiet, Outlier: OutlierDetection{BaseEjectionTime: 5 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		if err := w.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		set := tr.set.Load()
		a := set.eps[0]
		for range 3 {
			tr.failed(a, false, false)
		}
		if a.state.Load() != stateEjected {
			t.Fatal("a not ejected after 3 connect-level failures")
		}
		probed := func() bool {
			for range 4 { // round robin over both: a is probed if its ejection is over
				if ep, probe, _ := tr.pick(set, nil); probe {
					return ep == a
				}
			}
			return false
		}
		time.Sleep(5*time.Second - time.Nanosecond)
		if probed() {
			t.Fatal("a probed before its 5s ejection ended")
		}
		time.Sleep(time.Nanosecond)
		if !probed() {
			t.Fatalf("a not probed when its 5s ejection ended: until %v now %v state %d", a.until.Load(), tr.clock.now(), a.state.Load())
		}
	})
}

// TestDegradedOnMonotonicClock: Staleness counts from the moment the error
// arrived, and Degraded begins only past MaxStaleness.
func TestDegradedOnMonotonicClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		errs := make(chan struct{})
		src := registry.SourceFunc(func(ctx context.Context, fn func(registry.View)) error {
			fn(registry.View{Instances: []registry.Instance{{ID: "a", Address: "127.0.0.1", Port: 1}}, Revision: 1, Source: "user"})
			<-errs
			// ErrAt an hour ago (a wall time, as after a clock step): only reported.
			fn(registry.View{Err: errors.New("agent unreachable"), ErrAt: time.Now().Add(-time.Hour), Source: "user"})
			<-ctx.Done()
			return ctx.Err()
		})
		w, err := NewWatcher(WatcherOptions{Source: src, Service: "orders", Logger: quiet, MaxStaleness: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if err := w.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Hour) // healthy for an hour: no staleness
		close(errs)
		synctest.Wait()
		if s := w.Status(); s.Staleness != 0 || s.Degraded || s.Err == nil {
			t.Fatalf("status at the error: %+v, want staleness 0, not degraded", s)
		}
		time.Sleep(time.Minute)
		if s := w.Status(); s.Staleness != time.Minute || s.Degraded || w.Degraded() {
			t.Fatalf("status at MaxStaleness: %+v, want staleness 1m, not yet degraded", s)
		}
		time.Sleep(time.Nanosecond)
		if s := w.Status(); !s.Degraded || !w.Degraded() {
			t.Fatalf("status past MaxStaleness: %+v, want degraded", s)
		}
	})
}

// TestRampStartClampsProviderClock: how a provider's READY time (its wall
// clock) becomes a ramp on this process's monotonic clock, skew included.
func TestRampStartClampsProviderClock(t *testing.T) {
	clock := newMonoClock()
	now := time.Now()
	mono := clock.at(now)
	const window = 10 * time.Second
	s := SlowStart{Window: window, MinWeightPercent: 10, Aggression: 1}
	for _, c := range []struct {
		name  string
		ready time.Time
		ramps bool
		from  time.Duration // ramp start relative to now's reading
	}{
		{"ready 2s ago", now.Add(-2 * time.Second), true, -2 * time.Second},
		{"ready just now", now, true, 0},
		{"ready 3s in the future (provider's clock ahead): counts as now", now.Add(3 * time.Second), true, 0},
		{"ready a year in the future: counts as now", now.AddDate(1, 0, 0), true, 0},
		{"ready exactly Window ago: no ramp", now.Add(-window), false, 0},
		{"ready an hour ago: no ramp", now.Add(-time.Hour), false, 0},
		{"ready in 1970 (a clock reset): no ramp", time.Unix(0, 0), false, 0},
		{"ready at year 1: no ramp, no overflow", time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), false, 0},
		{"ready unknown", time.Time{}, false, 0},
	} {
		from, ramps := rampStart(clock, now, c.ready, window)
		if ramps != c.ramps || ramps && from != mono+c.from {
			t.Errorf("%s: rampStart = %v, %t; want %v, %t", c.name, from-mono, ramps, c.from, c.ramps)
		}
		ep := &endpoint{ready: c.ready, ramps: ramps, rampFrom: from}
		// However skewed, a ramp ends at most Window after it was first seen.
		if ep.inRamp(mono+window, s) || ep.rampWeight(mono+window, s) != 1 {
			t.Errorf("%s: still ramping Window after first seen", c.name)
		}
		if c.ramps && c.from == 0 && (!ep.inRamp(mono, s) || ep.rampWeight(mono, s) != 0.1) {
			t.Errorf("%s: weight at first sight %v, want the minimum 0.1", c.name, ep.rampWeight(mono, s))
		}
	}
	_, ramps := rampStart(clock, now, now, 0)
	if ramps {
		t.Error("ramping with slow start off (Window 0)")
	}
}

// Issue 30 item 10: a last-good snapshot dated in the future (written
// under a clock that was ahead) counts as 0 old when first read, as a
// future READY time does for slow start: its age never goes negative, and
// it is withdrawn MaxStaleness after that read, not an hour later.
func TestSnapshotFromTheFutureAgesFromFirstRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		path := t.TempDir() + "/orders.json"
		v := registry.View{Service: "orders", Instances: []registry.Instance{{ID: "a", Address: "127.0.0.1", Port: 1}},
			Revision: 7, Received: time.Now().Add(time.Hour), Source: "user"}
		if err := writeSnapshot(path, v); err != nil {
			t.Fatal(err)
		}
		down := registry.SourceFunc(func(ctx context.Context, fn func(registry.View)) error {
			fn(registry.View{Service: "orders", Err: errors.New("connection refused"), ErrAt: time.Now()})
			<-ctx.Done()
			return ctx.Err()
		})
		lg, logs := testlog.New(t, "consumer log")
		w, err := NewWatcher(WatcherOptions{Source: down, Service: "orders", SnapshotPath: path,
			MaxStaleness: time.Minute, FullReadInterval: -1, Logger: lg})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if err := w.Wait(context.Background()); err != nil {
			t.Fatalf("Wait on a snapshot from the future: %v, want it served", err)
		}
		if s := w.Status(); s.Snapshot != path || s.Age != 0 || w.snapshotErr() != nil {
			t.Fatalf("status at the first read: snapshot %q age %v (err %v), want %s served, 0 old", s.Snapshot, s.Age, w.snapshotErr(), path)
		}
		if !strings.Contains(logs.String(), "dated in the future") || !strings.Contains(logs.String(), "ahead_ms=3600000") {
			t.Errorf("the future date was not logged with how far ahead:\n%s", logs)
		}
		time.Sleep(time.Minute - time.Nanosecond)
		if s := w.Status(); s.Age != time.Minute-time.Nanosecond || w.snapshotErr() != nil {
			t.Fatalf("just before MaxStaleness: age %v (err %v), want 1m-1ns and still served", s.Age, w.snapshotErr())
		}
		time.Sleep(time.Nanosecond)
		err = w.snapshotErr()
		if !errors.Is(err, ErrDegraded) || !w.Degraded() || !strings.Contains(err.Error(), "1m0s old") {
			t.Fatalf("at MaxStaleness after the first read: %v (degraded %t), want the snapshot withdrawn, 1m0s old", err, w.Degraded())
		}
	})
}

// Issue 30 item 8: a zone that lost instances is judged by its former size
// for Zones.PeakWindow after it shrank, on the monotonic clock, and by its
// new size from then on: five instances in each of zones a (local) and b,
// three of a's leave the view; the share 3/7 spills until PeakWindow has
// passed, then every pick stays in a again (a zone shrunk on purpose).
func TestZonePeakForgottenAfterWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var all []registry.Instance
		for i := range 10 {
			zone := string(rune('a' + i/5))
			all = append(all, registry.Instance{ID: fmt.Sprintf("%s%d", zone, i%5), Address: "127.0.0.1", Port: 1 + i, Meta: map[string]string{"zone": zone}})
		}
		views := make(chan []registry.Instance, 2)
		views <- all
		src := registry.SourceFunc(func(ctx context.Context, fn func(registry.View)) error {
			for rev := uint64(1); ; rev++ {
				select {
				case ins := <-views:
					fn(registry.View{Service: "orders", Instances: ins, Revision: rev, Source: "user"})
				case <-ctx.Done():
					return ctx.Err()
				}
			}
		})
		w, err := NewWatcher(WatcherOptions{Source: src, Service: "orders", Logger: quiet, FullReadInterval: -1})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		tr, err := NewTransport(w, "", Options{Logger: quiet, Zones: Zones{Local: "a", PeakWindow: time.Minute}})
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		synctest.Wait()
		local := func(picks int) (n int) {
			set := tr.set.Load()
			for range picks {
				ep, _, _ := tr.pick(set, nil)
				if ep.zone == "a" {
					n++
				}
			}
			return n
		}
		if n := local(35); n != 35 {
			t.Fatalf("5+5 listed: %d of 35 picks local, want all", n)
		}
		views <- all[3:] // a0, a1, a2 leave the registry
		synctest.Wait()
		if n := local(35); n != 20 {
			t.Fatalf("a0-a2 gone: %d of 35 picks local, want 20 (4/7)", n)
		}
		time.Sleep(time.Minute - time.Nanosecond)
		if n := local(35); n != 20 {
			t.Fatalf("a0-a2 gone, just before PeakWindow: %d of 35 picks local, want still 20", n)
		}
		time.Sleep(time.Nanosecond)
		if n := local(35); n != 35 {
			t.Fatalf("PeakWindow after a shrank: %d of 35 picks local, want all (judged by its new size)", n)
		}
		// A new loss is judged by the size just forgotten: zone a now has 2,
		// loses 1 of them: it needs 2/7 of the healthy instances and has 1/6.
		views <- all[4:]
		synctest.Wait()
		if n := local(36); n != 21 {
			t.Fatalf("a3 gone after a shrank to 2: %d of 36 picks local, want 21 ((1/6)/(2/7) = 7/12)", n)
		}
	})
}
