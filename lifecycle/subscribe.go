package lifecycle

import "github.com/drainkit/drainkit/internal/syncx"

// Subscription delivers transitions without ever blocking them: C holds at
// most one value, and a newer transition replaces an unread one (latest value
// wins, as in grpc-go's health Watch). The first value is the transition that
// led to the current state.
type Subscription struct {
	// C receives transitions. It is never closed.
	C <-chan Transition
	c chan Transition
	l *Lifecycle
}

// Subscribe returns a Subscription. Call Close when done with it.
func (l *Lifecycle) Subscribe() *Subscription {
	c := make(chan Transition, 1)
	s := &Subscription{C: c, c: c, l: l}
	l.mu.Lock()
	l.subs[s] = struct{}{}
	s.offer(l.last)
	l.mu.Unlock()
	return s
}

// Close stops deliveries. It is idempotent.
func (s *Subscription) Close() {
	s.l.mu.Lock()
	delete(s.l.subs, s)
	s.l.mu.Unlock()
}

// offer replaces any unread value with t (latest wins). Called with l.mu
// held, so it is the only sender.
func (s *Subscription) offer(t Transition) { syncx.Offer(s.c, t) }
