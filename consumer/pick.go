package consumer

import (
	"math/rand/v2"
	"slices"
	"time"
)

// pick chooses an instance of set that is not in tried: a healthy one, or
// an ejected one whose ejection is over, as its half-open probe (probe is
// then true); with zone-aware picking, in the local zone first (see Zones).
// nil when none is left; an error only when Zones.Strict forbids leaving
// the local zone.
func (t *Transport) pick(set *endpointSet, tried []*endpoint) (ep *endpoint, probe bool, err error) {
	if len(set.eps) == 0 {
		return nil, false, nil
	}
	if set.zones != nil {
		if ep, probe, err = t.zonePick(set.zones, tried); ep != nil || err != nil {
			return ep, probe, err
		}
	}
	if ep, probe = t.pickIn(set, tried); ep == nil {
		ep = t.panicPick(set, tried)
	}
	return ep, probe, nil
}

// pickIn picks a healthy instance of set, or one due for its probe, that is
// not in tried; nil when none is.
func (t *Transport) pickIn(set *endpointSet, tried []*endpoint) (*endpoint, bool) {
	n := len(set.eps)
	if n == 0 {
		return nil, false
	}
	if t.opts.Balancing == LeastRequest && n > 1 {
		return t.pickLeast(set, tried)
	}
	return t.scan(set, tried, int(t.rr.Add(1)%uint64(n)))
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

// scan takes the instance at index start (the round-robin slot) when it is
// available; otherwise it spills. A ramping instance that declined the pick
// is taken only if nothing else is available.
func (t *Transport) scan(set *endpointSet, tried []*endpoint, start int) (*endpoint, bool) {
	var now time.Duration // monoClock reading, read once when first needed
	ep := set.eps[start]
	switch t.avail(set, ep, tried, &now) {
	case availHealthy:
		return ep, false
	case availProbe:
		return ep, true
	case availDeclined:
		return cmpOr(t.spill(set, tried, &now), ep), false
	}
	return t.spillOrProbe(set, tried, &now)
}

// Availability of an endpoint for one pick.
const (
	availNo       = iota // tried, ejected, or being probed
	availHealthy         // healthy, and its slow start (if any) admits the pick
	availProbe           // its ejection is over: this pick is its half-open probe
	availDeclined        // healthy, but its slow start declined the pick
)

// avail says whether ep can take one pick; an ejected endpoint whose
// ejection is over becomes the probe (CAS, so one pick gets it).
func (t *Transport) avail(set *endpointSet, ep *endpoint, tried []*endpoint, now *time.Duration) int {
	if slices.Contains(tried, ep) {
		return availNo
	}
	switch ep.state.Load() {
	case stateHealthy:
		if !set.ramp || !ep.ramps {
			return availHealthy
		}
		if *now == 0 {
			*now = t.clock.now()
		}
		if ep.admit(*now, t.opts.SlowStart) {
			return availHealthy
		}
		return availDeclined
	case stateEjected:
		if *now == 0 {
			*now = t.clock.now()
		}
		if int64(*now) >= ep.until.Load() && ep.state.CompareAndSwap(stateEjected, stateProbing) {
			return availProbe
		}
	}
	return availNo
}

// spillOrProbe is scan's path when the slot's instance is ejected or
// tried: an instance due for its probe takes the pick, else spill does.
func (t *Transport) spillOrProbe(set *endpointSet, tried []*endpoint, now *time.Duration) (*endpoint, bool) {
	if ep := t.dueProbe(set, tried, now); ep != nil {
		return ep, true
	}
	return t.spill(set, tried, now), false
}

// dueProbe returns an instance of set whose ejection is over, now taken as
// its probe; nil when none is due.
func (t *Transport) dueProbe(set *endpointSet, tried []*endpoint, now *time.Duration) *endpoint {
	for _, ep := range set.eps {
		if ep.state.Load() == stateEjected && t.avail(set, ep, tried, now) == availProbe {
			return ep
		}
	}
	return nil
}

// spill gives a pick whose slot is unavailable to the healthy, untried
// instances in turn (a round robin of its own over them), so that an
// ejected instance's share is spread evenly over the rest instead of going
// to its neighbour in the ring. A ramping instance that declines passes the
// pick on to the next one; nil when no other instance is healthy (a
// declined one is returned only when nothing else is).
func (t *Transport) spill(set *endpointSet, tried []*endpoint, now *time.Duration) *endpoint {
	n := len(set.eps)
	healthy := func(ep *endpoint) bool { return ep.state.Load() == stateHealthy && !slices.Contains(tried, ep) }
	k := 0
	for _, ep := range set.eps {
		if healthy(ep) {
			k++
		}
	}
	if k == 0 {
		return nil
	}
	j := int(t.spills.Add(1) % uint64(k))
	var declined *endpoint
	for i, seen := 0, 0; i < 2*n; i++ { // twice round: from the j-th healthy one, wrapping
		ep := set.eps[i%n]
		if !healthy(ep) {
			continue
		}
		if seen++; seen <= j {
			continue
		}
		switch t.avail(set, ep, tried, now) {
		case availHealthy:
			return ep
		case availDeclined:
			declined = cmpOr(declined, ep)
		}
	}
	return declined
}
