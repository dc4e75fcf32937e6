package lifecycle

// phase is how far the drain has got, as the goroutines that wait on it see
// it: the warm-up's canceller, Run and Draining wait for phaseDraining,
// WaitPropagation (a preStop hook) for phaseWindowEnded. Phases are reached
// in order and each once (syncx.Phase); reaching one releases the waiters of
// every earlier phase too, so a run that ends without a drain (a failed
// warm-up, a budget error) releases every waiter by reaching its last phase.
// The state machine, not the phase, says whether a drain really took place
// (see drainStart).
type phase int32

const (
	phaseNone        phase = iota // before the drain
	phaseDraining                 // t0, after the observers saw DRAINING
	phaseWindowEnded              // the propagation window is over
	phaseStopped                  // Run is done with the drain
)
