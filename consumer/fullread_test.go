package consumer_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/registry"
)

// store is a service's instance list with a revision, and a Source that
// delivers it as a registry watch does: every Watch call gets the current
// list at once and then every change.
type store struct {
	mu      sync.Mutex
	rev     uint64
	ins     []registry.Instance
	changed chan struct{} // closed and replaced on every change
}

func newStore(bs ...*backend) *store {
	s := &store{rev: 1, changed: make(chan struct{})}
	for _, b := range bs {
		s.ins = append(s.ins, b.instance())
	}
	return s
}

// remove deletes the instance with this ID, as a deregistration does.
func (s *store) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ins []registry.Instance
	for _, in := range s.ins {
		if in.ID != id {
			ins = append(ins, in)
		}
	}
	s.ins, s.rev = ins, s.rev+1
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *store) view() (registry.View, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ins := append([]registry.Instance{}, s.ins...)
	return registry.View{Service: "orders", Instances: ins, Revision: s.rev, Received: time.Now(), Source: "store"}, s.changed
}

func (s *store) Watch(ctx context.Context, fn func(registry.View)) error {
	for {
		v, changed := s.view()
		fn(v)
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// swallower wraps a Source: its first Watch call (the watch) drops the first
// view that lists fewer instances than the one before, as a registry client
// that lost an event would; later calls (full reads) see everything.
type swallower struct {
	src       registry.Source
	mu        sync.Mutex
	calls     int
	swallowed chan struct{}
}

func (s *swallower) Watch(ctx context.Context, fn func(registry.View)) error {
	s.mu.Lock()
	s.calls++
	first := s.calls == 1
	s.mu.Unlock()
	if !first {
		return s.src.Watch(ctx, fn)
	}
	last, done := -1, false
	return s.src.Watch(ctx, func(v registry.View) {
		if !done && last >= 0 && len(v.Instances) < last {
			done = true
			close(s.swallowed)
			return
		}
		last = len(v.Instances)
		fn(v)
	})
}

// A watch that drops a deregistration is corrected by the next full read:
// the instance leaves the view within one period, logged and counted.
func TestFullReadRepairsMissedDeregistration(t *testing.T) {
	a, b := newBackend(t, "a", nil), newBackend(t, "b", nil)
	st := newStore(a, b)
	src := &swallower{src: st, swallowed: make(chan struct{})}
	const period = 500 * time.Millisecond
	w, _, logs := newClient(t, src, consumer.WatcherOptions{FullReadInterval: period}, consumer.Options{})
	if n := len(w.View().Instances); n != 2 {
		t.Fatalf("first view lists %d instances, want 2", n)
	}
	st.remove("b")
	<-src.swallowed
	removed := time.Now()
	eventually(t, 5*time.Second, "b removed", func() bool { return !w.View().Has("b") })
	// One period, its grace (a tenth) and scheduling slack on a busy machine.
	if el := time.Since(removed); el > period+period/10+500*time.Millisecond {
		t.Errorf("b left the view %v after its deregistration, want within one full-read period (%v)", el, period)
	}
	s := w.Status()
	if s.FullReadRepairs != 1 || s.FullReads == 0 || s.Revision != 2 {
		t.Errorf("status = %+v, want 1 full-read repair at revision 2", s)
	}
	if !strings.Contains(logs.String(), "a full read found a difference the watch missed") || !strings.Contains(logs.String(), "removed=[b]") {
		t.Error("the repair was not logged with the removed instance")
	}
	// Full reads that agree with the watch change nothing.
	reads := s.FullReads
	eventually(t, 5*time.Second, "two more full reads", func() bool { return w.Status().FullReads >= reads+2 })
	if s := w.Status(); s.FullReadRepairs != 1 {
		t.Errorf("full-read repairs = %d after agreeing reads, want still 1", s.FullReadRepairs)
	}
}

// Without full reads, the missed deregistration stays: the test above
// proves the full read, not something else, removed it.
func TestNoFullReadKeepsMissedDeregistration(t *testing.T) {
	a, b := newBackend(t, "a", nil), newBackend(t, "b", nil)
	st := newStore(a, b)
	src := &swallower{src: st, swallowed: make(chan struct{})}
	w, _, _ := newClient(t, src, consumer.WatcherOptions{FullReadInterval: -1}, consumer.Options{})
	st.remove("b")
	<-src.swallowed
	time.Sleep(time.Second) // the time in which a full read would have removed it; nothing to wait for
	if !w.View().Has("b") || w.Status().FullReads != 0 {
		t.Errorf("view %+v, status %+v: want b still listed and no full read", w.View(), w.Status())
	}
}

// A static list is never read again.
func TestNoFullReadOfStaticList(t *testing.T) {
	src, _ := consumer.Static("orders", newBackend(t, "a", nil).addr())
	w, _, _ := newClient(t, src, consumer.WatcherOptions{FullReadInterval: 50 * time.Millisecond}, consumer.Options{})
	time.Sleep(300 * time.Millisecond) // six periods in which nothing may happen
	if n := w.Status().FullReads; n != 0 {
		t.Errorf("%d full reads of a static list, want 0", n)
	}
}
