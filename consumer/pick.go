package consumer

import (
	"math/rand/v2"
	"slices"
	"time"
)

// pick chooses an instance of set that is not in tried: a healthy one, or
// an ejected one whose ejection is over, as its half-open probe (probe is
// then true). nil when none is left.
func (t *Transport) pick(set *endpointSet, tried []*endpoint) (ep *endpoint, probe bool) {
	n := len(set.eps)
	if n == 0 {
		return nil, false
	}
	if t.opts.Balancing == LeastRequest && n > 1 {
		ep, probe = t.pickLeast(set, tried)
	} else {
		ep, probe = t.scan(set, tried, int(t.rr.Add(1)%uint64(n)))
	}
	if ep == nil {
		ep = t.panicPick(set, tried)
	}
	return ep, probe
}

// panicPick is the last resort when every untried candidate is ejected
// (the view shrank under its ejected instances): like Envoy's panic
// routing, it sends to an ejected one rather than to none.
func (t *Transport) panicPick(set *endpointSet, tried []*endpoint) *endpoint {
	n := len(set.eps)
	start := int(t.rr.Add(1) % uint64(n))
	for i := range n {
		if ep := set.eps[(start+i)%n]; !slices.Contains(tried, ep) {
			return ep
		}
	}
	return nil
}

// pickLeast takes the one with fewer requests in flight (scaled by slow
// start) of two scans from random places.
func (t *Transport) pickLeast(set *endpointSet, tried []*endpoint) (*endpoint, bool) {
	n := len(set.eps)
	i := rand.IntN(n)
	a, probe := t.scan(set, tried, i)
	if a == nil || probe {
		return a, probe
	}
	b, probe := t.scan(set, tried, (i+1+rand.IntN(n-1))%n)
	if b == nil || probe {
		return cmpOr(b, a), probe
	}
	if b.inflight.Load() < a.inflight.Load() {
		return b, false
	}
	return a, false
}

// scan walks the set from index start. A ramping instance that declined
// the pick is taken only if nothing else is available.
func (t *Transport) scan(set *endpointSet, tried []*endpoint, start int) (*endpoint, bool) {
	var now time.Duration // monoClock reading, read once when first needed
	var declined *endpoint
	n := len(set.eps)
	for i := range n {
		ep := set.eps[(start+i)%n]
		if slices.Contains(tried, ep) {
			continue
		}
		switch ep.state.Load() {
		case stateHealthy:
			if !set.ramp || !ep.ramps {
				return ep, false
			}
			if now == 0 {
				now = t.clock.now()
			}
			if ep.admit(now, t.opts.SlowStart) {
				return ep, false
			}
			declined = cmpOr(declined, ep)
		case stateEjected:
			if now == 0 {
				now = t.clock.now()
			}
			if int64(now) >= ep.until.Load() && ep.state.CompareAndSwap(stateEjected, stateProbing) {
				return ep, true
			}
		}
	}
	return declined, false
}
