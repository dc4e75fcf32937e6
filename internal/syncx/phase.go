package syncx

import (
	"sync"
	"sync/atomic"
)

// Phase is a drain's progress through phases that only move forward (0, 1,
// ... last). Each phase has a channel, closed when the phase is reached or
// passed, and reading the current phase costs one atomic load. It replaces
// a flag, a channel and a sync.Once per phase. Create it with NewPhase; all
// methods are safe for concurrent use.
type Phase[P ~int32] struct {
	cur     atomic.Int32
	mu      sync.Mutex
	reached []chan struct{} // by phase; reached[0] is closed from the start
}

// NewPhase returns a Phase at phase 0 whose last phase is last.
func NewPhase[P ~int32](last P) *Phase[P] {
	p := &Phase[P]{reached: make([]chan struct{}, last+1)}
	for i := range p.reached {
		p.reached[i] = make(chan struct{})
	}
	close(p.reached[0])
	return p
}

// Advance moves to phase to, closing the channel of every phase passed on
// the way, and reports whether this call did it: false if the phase was
// already to or later. Exactly one caller sees true for each phase that is
// moved to, so the work of entering it runs once.
func (p *Phase[P]) Advance(to P) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	from := P(p.cur.Load())
	if from >= to {
		return false
	}
	for ph := from + 1; ph <= to; ph++ {
		close(p.reached[ph])
	}
	p.cur.Store(int32(to))
	return true
}

// Reached reports whether phase ph has been reached (or passed).
func (p *Phase[P]) Reached(ph P) bool { return P(p.cur.Load()) >= ph }

// Done returns a channel that is closed once phase ph has been reached.
func (p *Phase[P]) Done(ph P) <-chan struct{} { return p.reached[ph] }
