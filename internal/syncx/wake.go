package syncx

// Wake is a wake-up signal: "something changed, re-check". Notify never
// blocks, and any number of Notify calls between two receives wake the
// receiver once (the channel has capacity 1). The zero value is not usable:
// create it with NewWake.
type Wake struct{ ch chan struct{} }

// NewWake returns a Wake with no pending signal.
func NewWake() Wake { return Wake{ch: make(chan struct{}, 1)} }

// Notify makes one signal pending, unless one already is.
func (w Wake) Notify() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// C receives a pending signal.
func (w Wake) C() <-chan struct{} { return w.ch }
