package drill

import (
	"context"
	"fmt"
	"sync"

	"github.com/drainkit/drainkit/registry"
)

// feeder is a discovery whose answers can be read as one consistent pair
// of view and endpoints, with a channel closed at the next change: every
// discovery of the drill (a viewFeed underneath).
type feeder interface {
	snapshot() (registry.View, []Endpoint, <-chan struct{})
}

// relayed is one answer a viewRelay delivers: the view drainkit consumers
// watch and the endpoints naive ones pull.
type relayed struct {
	view registry.View
	eps  []Endpoint
}

// viewRelay stands between a run's discovery and its consumers
// (ScenarioBadPush, ScenarioZoneLoss): it follows every answer of the
// discovery and delivers what edit makes of it, every message to every
// Watch call in order (never "latest wins", so that a reordered or
// duplicated answer reaches the consumers as sent). The embedded Discovery
// stays the drill's own: Add, WaitListed and the registry's decision
// (answered) are the discovery's, Endpoints, Watch and revision are what
// the consumers were delivered.
type viewRelay struct {
	Discovery
	edit func(relayed) []relayed

	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	sent    []relayed // every message delivered, in order
	changed chan struct{}
}

// newViewRelay starts relaying disc's answers through edit (called from
// one goroutine, in the order of the answers). disc must be one of the
// drill's discoveries. Its current answer is relayed before newViewRelay
// returns, so that consumers built next start from it.
func newViewRelay(disc Discovery, edit func(relayed) []relayed) (*viewRelay, error) {
	f, ok := disc.(feeder)
	if !ok {
		return nil, fmt.Errorf("the discovery %T cannot be relayed", disc)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &viewRelay{Discovery: disc, edit: edit, cancel: cancel, done: make(chan struct{}), changed: make(chan struct{})}
	last, delivered, changed := r.relay(f, registry.View{}, false)
	go r.follow(ctx, f, last, delivered, changed)
	return r, nil
}

// relay relays f's current answer unless it is last (already delivered)
// or no answer yet, and returns the last answer delivered and the channel
// closed at f's next change. An answer is a view with a receipt time or an
// error.
func (r *viewRelay) relay(f feeder, last registry.View, delivered bool) (registry.View, bool, <-chan struct{}) {
	v, eps, changed := f.snapshot()
	if answered := !v.Received.IsZero() || v.Err != nil; answered && (!delivered || !sameView(v, last)) {
		r.publish(r.edit(relayed{view: v, eps: eps})...)
		last, delivered = v, true
	}
	return last, delivered, changed
}

// follow relays each later answer of f until ctx ends.
func (r *viewRelay) follow(ctx context.Context, f feeder, last registry.View, delivered bool, changed <-chan struct{}) {
	defer close(r.done)
	for {
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
		last, delivered, changed = r.relay(f, last, delivered)
	}
}

// publish delivers msgs, in order, after what was delivered before.
func (r *viewRelay) publish(msgs ...relayed) {
	if len(msgs) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, msgs...)
	close(r.changed)
	r.changed = make(chan struct{})
}

// latest returns the last message delivered (ok false before the first).
func (r *viewRelay) latest() (relayed, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.sent) == 0 {
		return relayed{}, false
	}
	return r.sent[len(r.sent)-1], true
}

// Endpoints implements Source: the last message's endpoints, as a naive
// consumer takes whatever came last.
func (r *viewRelay) Endpoints() []Endpoint {
	m, _ := r.latest()
	return m.eps
}

// Watch implements registry.Source: fn gets the last message delivered
// (if any), then every later one in order, until ctx ends.
func (r *viewRelay) Watch(ctx context.Context, fn func(registry.View)) error {
	r.mu.Lock()
	next := max(len(r.sent)-1, 0)
	r.mu.Unlock()
	for {
		r.mu.Lock()
		pending := r.sent[next:]
		next = len(r.sent)
		changed := r.changed
		r.mu.Unlock()
		for _, m := range pending {
			fn(m.view)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// revision implements Discovery: the revision of the last message
// delivered (what a naive consumer's list is a copy of).
func (r *viewRelay) revision() uint64 {
	m, _ := r.latest()
	return m.view.Revision
}

// Close stops the relay; the discovery is closed by its owner.
func (r *viewRelay) Close() {
	r.cancel()
	<-r.done
}
