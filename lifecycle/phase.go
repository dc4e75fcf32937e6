package lifecycle

import "sync"

// phase is how far the drain has got, as the goroutines that wait on it see
// it: the warm-up's canceller and Run wait for phaseDraining, WaitPropagation
// (a preStop hook) for phaseWindowEnded. Phases are reached in order and each
// once; reaching one releases the waiters of every earlier phase too, so a run
// that ends without a drain (a failed warm-up, a budget error) releases every
// waiter by reaching its last phase. The state machine, not the phase, says
// whether a drain really took place (see drainStart).
type phase int

const (
	phaseDraining    phase = iota // t0, after the observers saw DRAINING
	phaseWindowEnded              // the propagation window is over
	phaseStopped                  // Run is done with the drain
	numPhases
)

// phases is the one source of the phase: a counter of phases reached and
// one channel per phase, closed when it is reached. The zero value is not
// ready; use newPhases. A private copy of internal/syncx's Phase, cut to what
// Run needs: lifecycle imports nothing of the module (layout rule).
type phases struct {
	mu      sync.Mutex
	reached phase // the number of phases reached so far
	done    [numPhases]chan struct{}
}

func newPhases() *phases {
	p := &phases{}
	for i := range p.done {
		p.done[i] = make(chan struct{})
	}
	return p
}

// reach moves to ph, releasing the waiters of ph and of every earlier phase
// not yet reached. Reaching a phase again, or an earlier one, is a no-op.
func (p *phases) reach(ph phase) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for ; p.reached <= ph; p.reached++ {
		close(p.done[p.reached])
	}
}

// wait returns a channel closed once ph (or a later phase) is reached.
func (p *phases) wait(ph phase) <-chan struct{} { return p.done[ph] }
