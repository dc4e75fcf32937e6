package drill

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/registry"
)

// feedDiscovery is a registryFeed that a test feeds views by hand, as a
// registry watch would.
type feedDiscovery struct{ *registryFeed }

func (feedDiscovery) Describe() string { return "test feed" }
func (feedDiscovery) Close()           {}

// pushView returns a registry answer listing the replicas ids at revision rev.
func pushView(rev uint64, ids ...int) registry.View {
	v := registry.View{Service: "svc", Source: "test", Revision: rev, Received: time.Now(), Instances: []registry.Instance{}}
	for _, id := range ids {
		v.Instances = append(v.Instances, registry.Instance{ID: fmt.Sprintf("r%d", id), Address: "127.0.0.1", Port: 8000 + id})
	}
	return v
}

// TestBadPushDeliversInOrder: the proxy delivers every answer twice,
// follows a change with the previous answer, and once an empty list at
// the current revision, each message in order to every watcher; a naive
// consumer's list is the last message, and drainkit's Watcher keeps the
// newest view through the stale answer and the empty one.
func TestBadPushDeliversInOrder(t *testing.T) {
	disc := feedDiscovery{newRegistryFeed("svc", "test")}
	disc.receive(pushView(1, 1, 2))
	b, err := newBadPush(disc)
	if err != nil {
		t.Fatal(err)
	}
	defer b.relay.Close()

	var mu sync.Mutex
	var got []uint64 // revisions delivered, 0 for an empty list
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() {
		_ = b.relay.Watch(ctx, func(v registry.View) {
			mu.Lock()
			defer mu.Unlock()
			if len(v.Instances) == 0 {
				got = append(got, 0)
				return
			}
			got = append(got, v.Revision)
		})
	})
	w, err := consumer.NewWatcher(consumer.WatcherOptions{Source: b.relay, Service: "svc", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := w.Wait(ctx); err != nil {
		t.Fatal(err)
	}

	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) == 1 }) // subscribed
	disc.receive(pushView(2, 2))
	waitFor(t, func() bool { return w.View().Revision == 2 && b.relay.revision() == 1 })
	if eps := b.relay.Endpoints(); len(eps) != 2 {
		t.Errorf("naive list after the stale answer: %v, want r1 and r2 again", eps)
	}
	if err := b.answerEmpty(ctx); err != nil {
		t.Fatal(err)
	}
	want := []uint64{1, 2, 2, 1, 0, 2} // the current answer, its change, its duplicate, the stale one, empty, the good one again
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(got) >= len(want) })
	mu.Lock()
	if !slices.Equal(got, want) {
		t.Errorf("delivered revisions %v, want %v", got, want)
	}
	mu.Unlock()
	if v := w.View(); v.Revision != 2 || len(v.Instances) != 1 {
		t.Errorf("drainkit's view %d instances at revision %d, want r2 alone at 2", len(v.Instances), v.Revision)
	}
	st := b.stats(time.Now())
	if st.Duplicated != 3 || st.Reordered != 1 || st.Empty != 1 || st.EmptyEnd-st.EmptyStart < badPushHold {
		t.Errorf("stats %+v: want 3 duplicates (two answers and the resend), 1 reordered, 1 empty for %s", st, badPushHold)
	}
}

// waitFor polls cond until it holds, for at most 5 s.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
