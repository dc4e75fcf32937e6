package drill

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/drainkit/drainkit/registry"
)

// viewFeed is a discovery's current answer in both shapes the consumers
// use: the registry.View a drainkit consumer watches and the endpoint list a
// naive one pulls per request. Every change closes and replaces changed, so
// that watchers wake up and read the latest (latest wins: a slow watcher
// skips views, it never queues them).
type viewFeed struct {
	mu      sync.Mutex
	view    registry.View
	eps     []Endpoint
	changed chan struct{}
	// history is every published answer's time, revision and replicas, for
	// the scenarios' "registry decision" instant (guarded by mu).
	history []feedChange
}

// feedChange is one published answer of a discovery: when, its revision
// and the replicas it listed.
type feedChange struct {
	at       time.Time
	revision uint64
	replicas []int
}

func newViewFeed(service, source string) *viewFeed {
	return &viewFeed{view: registry.View{Service: service, Source: source}, changed: make(chan struct{})}
}

// setLocked publishes v and eps; the caller holds f.mu.
func (f *viewFeed) setLocked(v registry.View, eps []Endpoint) {
	f.view, f.eps = v, eps
	ids := make([]int, len(eps))
	for i, ep := range eps {
		ids[i] = ep.Replica
	}
	f.history = append(f.history, feedChange{at: time.Now(), revision: v.Revision, replicas: ids})
	close(f.changed)
	f.changed = make(chan struct{})
}

// snapshot returns the current view, endpoints and change channel.
func (f *viewFeed) snapshot() (registry.View, []Endpoint, <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.view, f.eps, f.changed
}

// answered returns the first answer published at or after from that does
// not list replica id (listed false: the discovery decided it was gone) or
// lists it (listed true: it was added), and the answer's revision; ok is
// false when there was none.
func (f *viewFeed) answered(id int, from time.Time, listed bool) (at time.Time, revision uint64, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.history {
		if !c.at.Before(from) && slices.Contains(c.replicas, id) == listed {
			return c.at, c.revision, true
		}
	}
	return time.Time{}, 0, false
}

// revision returns the revision of the current answer.
func (f *viewFeed) revision() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.view.Revision
}

// Endpoints implements Source.
func (f *viewFeed) Endpoints() []Endpoint {
	_, eps, _ := f.snapshot()
	return eps
}

// Watch implements registry.Source: fn gets the current view at once (if
// there has been an answer yet) and then every later one, until ctx ends.
func (f *viewFeed) Watch(ctx context.Context, fn func(registry.View)) error {
	var last registry.View
	delivered := false
	for {
		v, _, changed := f.snapshot()
		if answered := !v.Received.IsZero() || v.Err != nil; answered && (!delivered || !sameView(v, last)) {
			fn(v)
			last, delivered = v, true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// sameView reports whether a and b are the same answer: the same revision,
// receipt time and error.
func sameView(a, b registry.View) bool {
	return a.Revision == b.Revision && a.Received.Equal(b.Received) && a.ErrAt.Equal(b.ErrAt)
}

// WaitListed blocks until replica id is among the endpoints, or ctx ends;
// its error then says what discovery last answered, since an unreachable
// registry is the usual cause.
func (f *viewFeed) WaitListed(ctx context.Context, id int) error {
	for {
		v, eps, changed := f.snapshot()
		for _, ep := range eps {
			if ep.Replica == id {
				return nil
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			var last string
			switch {
			case v.Err != nil:
				last = fmt.Sprintf("its last answer was an error: %v (is the registry reachable?)", v.Err)
			case v.Received.IsZero():
				last = "it never answered (is the registry reachable?)"
			default:
				last = fmt.Sprintf("its last answer listed %d instance(s)", len(v.Instances))
			}
			return fmt.Errorf("replica %d never listed by discovery (%s): %s: %w", id, v.Source, last, ctx.Err())
		}
	}
}
