package consul

import "time"

// minQueryInterval is the least time between the starts of two blocking
// queries whose answer came back at once, so that a watch never spins.
const minQueryInterval = 100 * time.Millisecond

// nextIndex applies Consul's rules for the X-Consul-Index of a blocking
// query: prev is the index the query waited on, got the index it returned.
// It returns the index to wait on next and whether the sequence was reset.
//
//   - got < prev: the index went backwards (a new leader or an agent that
//     lost its state); start again from 0, which answers at once with the
//     current index.
//   - got == 0: never valid to wait on (it would not block); use 1.
//   - otherwise: wait on got.
//
// The caller rate-limits queries that answer at once (minQueryInterval).
func nextIndex(prev, got uint64) (next uint64, reset bool) {
	switch {
	case got < prev:
		return 0, true
	case got == 0:
		return 1, true
	default:
		return got, false
	}
}
