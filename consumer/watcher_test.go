package consumer_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/registry"
)

// An empty list for 2s between two full lists, under load: no request fails.
func TestEmptyListBetweenFullListsLosesNothing(t *testing.T) {
	a, b := newBackend(t, "a", nil), newBackend(t, "b", nil)
	f := newFeed()
	f.push(10, a, b)
	w, tr, logs := newClient(t, f, consumer.WatcherOptions{EmptyHold: 5 * time.Second}, consumer.Options{})
	var failed, sent atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			sent.Add(1)
			if _, err := do(tr, "GET", ""); err != nil {
				failed.Add(1)
				t.Errorf("request failed: %v", err)
			}
			time.Sleep(5 * time.Millisecond) // load pacing
		}
	})
	f.push(11)
	eventually(t, 5*time.Second, "empty list held", func() bool { return w.Status().EmptyHeld > 0 })
	time.Sleep(2 * time.Second) // the registry's empty period under test
	if n := w.Status().Instances; n != 2 {
		t.Errorf("candidates during the hold = %d, want 2", n)
	}
	f.push(12, a, b)
	eventually(t, 5*time.Second, "hold ended", func() bool { return w.Status().EmptyHeld == 0 && w.Status().Revision == 12 })
	cancel()
	wg.Wait()
	if failed.Load() != 0 || sent.Load() < 50 {
		t.Errorf("%d of %d requests failed, want 0 of at least 50", failed.Load(), sent.Load())
	}
	for _, want := range []string{"holding the last non-empty view", "lists instances again within the empty-list hold"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q", want)
		}
	}
}

// The hold ends: an empty list that stays empties the candidates; the
// first list, when empty, is delivered at once.
func TestEmptyListAppliedAfterHoldAndWhenFirst(t *testing.T) {
	f := newFeed()
	f.push(1)
	w, tr, logs := newClient(t, f, consumer.WatcherOptions{EmptyHold: 300 * time.Millisecond}, consumer.Options{})
	if _, err := do(tr, "GET", ""); !errors.Is(err, consumer.ErrNoInstance) {
		t.Errorf("error with an empty first list = %v, want ErrNoInstance", err)
	}
	a := newBackend(t, "a", nil)
	f.push(2, a)
	eventually(t, 5*time.Second, "view with a", func() bool { return w.Status().Instances == 1 })
	f.push(3)
	eventually(t, 5*time.Second, "hold expiry", func() bool { return w.Status().Instances == 0 })
	if !strings.Contains(logs.String(), "emptying the candidate set") {
		t.Error("the expired hold was not logged")
	}
}

func TestOlderRevisionNeverReplacesNewer(t *testing.T) {
	a, b := newBackend(t, "a", nil), newBackend(t, "b", nil)
	f := newFeed()
	f.push(7, a)
	w, _, _ := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{})
	f.push(5, b)
	f.push(8, a, b)
	eventually(t, 5*time.Second, "revision 8", func() bool { return w.Status().Revision == 8 })
	if s := w.Status(); s.Dropped != 1 || s.Instances != 2 {
		t.Errorf("status = %+v, want revision 5 dropped and 2 instances", s)
	}
}

// TestEpochOrdersViews (issue 18 item 5): a view of a higher epoch replaces
// any view of a lower one, whatever the revisions; within an epoch the order
// stays strict, a source error in between included; a lower epoch is older.
func TestEpochOrdersViews(t *testing.T) {
	a, b := newBackend(t, "a", nil), newBackend(t, "b", nil)
	f := newFeed()
	f.pushEpoch(0, 10, a)
	w, _, _ := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{})
	lists := func(want string) func() bool {
		return func() bool { v := w.View(); return len(v.Instances) == 1 && v.Instances[0].ID == want }
	}
	dropped := func(n uint64) {
		t.Helper()
		eventually(t, 5*time.Second, fmt.Sprintf("%d views dropped", n), func() bool { return w.Status().Dropped == n })
		if !lists("a")() && !lists("b")() {
			t.Fatalf("view %+v", w.View())
		}
	}
	f.pushEpoch(0, 5, b) // older, same epoch
	dropped(1)
	f.ch <- registry.View{Service: "orders", Err: errors.New("agent unreachable"), ErrAt: time.Now()}
	f.pushEpoch(0, 6, b) // an error in between does not reset the order
	dropped(2)
	if !lists("a")() {
		t.Fatalf("a lower revision of the same epoch after an error replaced the view: %+v", w.View())
	}
	f.pushEpoch(1, 3, b) // the source's revisions started again
	eventually(t, 5*time.Second, "the new epoch's view", lists("b"))
	if s := w.Status(); s.Epoch != 1 || s.Revision != 3 || s.Staleness != 0 {
		t.Fatalf("status %+v, want epoch 1, revision 3, healthy", s)
	}
	f.pushEpoch(1, 2, a) // older within the new epoch
	dropped(3)
	f.pushEpoch(0, 100, a) // a lower epoch is older, whatever its revision
	dropped(4)
	f.pushEpoch(1, 4, a)
	eventually(t, 5*time.Second, "revision 4 of epoch 1", lists("a"))
}

// TestRestartedWatchStartsNewOrder: the first view of a restarted Watch call
// is taken whatever its epoch and revision; the source starts counting again.
func TestRestartedWatchStartsNewOrder(t *testing.T) {
	a, b := newBackend(t, "a", nil), newBackend(t, "b", nil)
	var calls atomic.Int32
	src := registry.SourceFunc(func(ctx context.Context, fn func(registry.View)) error {
		if calls.Add(1) == 1 {
			fn(registry.View{Instances: []registry.Instance{a.instance()}, Epoch: 3, Revision: 100, Source: "user"})
			return errors.New("stream closed")
		}
		fn(registry.View{Instances: []registry.Instance{b.instance()}, Revision: 1, Source: "user"})
		<-ctx.Done()
		return ctx.Err()
	})
	w, _, _ := newClient(t, src, consumer.WatcherOptions{MinBackoff: time.Millisecond}, consumer.Options{})
	eventually(t, 5*time.Second, "the restarted Watch's view", func() bool { return w.Status().Instances == 1 && w.View().Has("b") })
	if s := w.Status(); s.Dropped != 0 || s.Epoch != 0 || s.Revision != 1 {
		t.Fatalf("status %+v, want the restarted Watch's epoch 0 revision 1 taken", s)
	}
}

// A source error keeps the last good view and reports its staleness; the
// source's recovery clears it, and a lower revision of a new epoch after the
// error is taken (a Consul agent that lost its state restarts its index).
func TestSourceErrorKeepsLastGoodView(t *testing.T) {
	a := newBackend(t, "a", nil)
	f := newFeed()
	f.push(100, a)
	w, tr, _ := newClient(t, f, consumer.WatcherOptions{MaxStaleness: 300 * time.Millisecond}, consumer.Options{})
	f.ch <- registry.View{Service: "orders", Err: errors.New("agent unreachable"), ErrAt: time.Now()}
	eventually(t, 5*time.Second, "degraded", func() bool { return w.Status().Degraded })
	s := tr.Status()
	if s.Instances != 1 || s.Staleness < 300*time.Millisecond || s.Err == nil {
		t.Errorf("status = %v, want the last good view with staleness >= 300ms and the error", s)
	}
	if _, err := do(tr, "GET", ""); err != nil {
		t.Errorf("request on the last good view: %v", err)
	}
	f.pushEpoch(1, 3, a)
	eventually(t, 5*time.Second, "recovery", func() bool { s := w.Status(); return s.Revision == 3 && s.Staleness == 0 })
	if w.Status().Degraded {
		t.Error("still degraded after recovery")
	}
}

// A source whose Watch returns is restarted, with backoff.
func TestSourceRestartedAfterWatchReturns(t *testing.T) {
	a := newBackend(t, "a", nil)
	var calls atomic.Int32
	src := registry.SourceFunc(func(ctx context.Context, fn func(registry.View)) error {
		if calls.Add(1) <= 2 {
			return errors.New("connection refused")
		}
		fn(registry.View{Instances: []registry.Instance{a.instance()}, Revision: 1, Source: "user"})
		<-ctx.Done()
		return ctx.Err()
	})
	start := time.Now()
	w, _, logs := newClient(t, src, consumer.WatcherOptions{MinBackoff: 50 * time.Millisecond, MaxBackoff: time.Second}, consumer.Options{})
	if s := w.Status(); s.Restarts != 2 || s.Instances != 1 || s.Staleness != 0 {
		t.Errorf("status = %+v, want 2 restarts and then a healthy view", s)
	}
	// Backoff: about 50ms, then about 100ms, each at least half of it.
	if el := time.Since(start); el < 75*time.Millisecond {
		t.Errorf("first view after %v, want the restarts backed off (>= 75ms)", el)
	}
	if !strings.Contains(logs.String(), "restarting it") {
		t.Error("restart not logged")
	}
	// Before the first view there is no last good view to keep.
	if l := logs.String(); !strings.Contains(l, "failed before its first view") || strings.Contains(l, "keeping the last good view") {
		t.Errorf("the failures before the first view are not logged as such:\n%s", l)
	}
}

func TestWatcherOptionsValidated(t *testing.T) {
	if _, err := consumer.NewWatcher(consumer.WatcherOptions{}); err == nil || !strings.Contains(err.Error(), "Source") {
		t.Errorf("error = %v, want one naming Source", err)
	}
	src, _ := consumer.Static("orders")
	w, err := consumer.NewWatcher(consumer.WatcherOptions{Source: src, Service: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, o := range []consumer.Options{{MaxAttempts: 9}, {Outlier: consumer.OutlierDetection{MaxEjectionPercent: 101}}, {Budget: consumer.RetryBudget{Percent: 200}}} {
		if _, err := consumer.NewTransport(w, "", o); err == nil || !strings.Contains(err.Error(), "Options.") {
			t.Errorf("NewTransport(%+v) error = %v, want one naming the field", o, err)
		}
	}
}

// Views swap while requests run (slow start on, so picks read READY times):
// no request fails and the race detector sees no unsynchronised access.
func TestViewSwapsUnderLoad(t *testing.T) {
	bs := []*backend{newBackend(t, "a", nil), newBackend(t, "b", nil), newBackend(t, "c", nil)}
	f := newFeed()
	push := func(rev uint64, ready time.Time, bs ...*backend) {
		ins := []registry.Instance{}
		for _, b := range bs {
			in := b.instance()
			in.Meta = map[string]string{registry.MetaReadyAt: ready.UTC().Format(time.RFC3339Nano)}
			ins = append(ins, in)
		}
		f.ch <- registry.View{Service: "orders", Instances: ins, Revision: rev, Received: time.Now(), Source: "feed"}
	}
	push(1, time.Now().Add(-time.Hour), bs...)
	w, tr, _ := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{SlowStart: consumer.SlowStart{Window: time.Minute}})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				if _, err := do(tr, "GET", ""); err != nil {
					t.Errorf("request: %v", err)
				}
			}
		})
	}
	for rev := uint64(2); rev < 40; rev++ {
		ready := time.Now().Add(-time.Hour)
		if rev%3 == 0 {
			ready = time.Now() // restarted instances, ramping
		}
		push(rev, ready, bs[rev%3], bs[(rev+1)%3])
		eventually(t, 5*time.Second, "view applied", func() bool { return w.Status().Revision == rev })
	}
	cancel()
	wg.Wait()
}
