package lifecycle

import "github.com/drainkit/drainkit/internal/syncx"

// Subscribe returns a channel of transitions and cancel, which stops
// deliveries (call it when done; it is idempotent). Deliveries never block a
// transition: the channel holds at most one value, and a newer transition
// replaces an unread one (latest value wins, as in grpc-go's health Watch).
// The first value is the transition that led to the current state. The
// channel is never closed.
func (l *Lifecycle) Subscribe() (c <-chan Transition, cancel func()) {
	s := &subscription{c: make(chan Transition, 1)}
	l.mu.Lock()
	l.subs[s] = struct{}{}
	s.offer(l.last)
	l.mu.Unlock()
	return s.c, func() {
		l.mu.Lock()
		delete(l.subs, s)
		l.mu.Unlock()
	}
}

// subscription is one Subscribe's channel.
type subscription struct{ c chan Transition }

// offer replaces any unread value with t (latest wins). Called with l.mu
// held, so it is the only sender.
func (s *subscription) offer(t Transition) { syncx.Offer(s.c, t) }
