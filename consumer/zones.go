package consumer

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrZoneUnavailable is returned, with Zones.Strict, when the local zone has
// no instance to send a request to.
var ErrZoneUnavailable = errors.New("consumer: no instance available in the local zone, and Zones.Strict keeps requests in it")

// Zones configures zone-aware picking, after Envoy's zone-aware routing: a
// consumer in zone Local sends its requests to the instances of its own zone
// (an instance's zone is its registry metadata under MetaKey) while the
// zone has the healthy instances its share of the traffic needs, and only
// the deficit to the other zones.
//
// The local zone's share of the traffic is taken to be its share of the
// instances the zones have (a deployment sized per zone: Envoy reads the
// clients' own spread from its local cluster, which a consumer does not
// know). While the local zone's share of the healthy (not ejected)
// instances is at least that, every request stays in it. Below, the
// requests are split: the local zone keeps healthy share / needed share of
// them and the rest spills to the other zones' healthy instances, so that
// every healthy instance ends up with the same load when every zone's
// consumers do the same. With two zones of two instances and one of the
// local ones ejected, the local zone keeps (1/3)/(1/2) = 2/3 of the
// requests and a third spills; with both ejected, all of them spill.
// MinHealthyPercent lets a deficit go unspilled: requests stay in the local
// zone while its healthy share is at least that percentage of its needed
// share (cross-zone traffic costs latency and money). Instances of the
// local zone whose ejection is over still get their half-open probe, so
// the zone takes its traffic back once it recovers. Outlier ejection counts
// per zone: at most Outlier.MaxEjectionPercent of a zone's instances are
// ejected at once, beyond which that zone is in panic mode.
//
// A zone's size, for the needed share, is the largest number of instances
// it listed in the views of the last PeakWindow (default 5m), not only the
// current view's: instances that left the registry (a crash, a lost lease,
// a zone outage) count as missing, as Envoy judges a locality against the
// hosts it had, not as a smaller zone that needs less. With five instances
// in each of two zones and three of the local five gone from the view, the
// local zone still needs 5/10 of the healthy instances and has 2/7: it
// keeps (2/7)/(5/10) = 4/7 of the requests and 3/7 spill, so its two
// remaining instances take the load of two instances, not of five. A size
// is forgotten PeakWindow after the zone fell below it (on the monotonic
// clock), so a zone shrunk on purpose is judged by its new size from then.
//
// Zone-aware picking applies when Local is set, the view lists at least
// MinClusterSize instances, and at least one is in the local zone;
// otherwise every instance is a candidate alike. With Strict, requests
// never leave the local zone: they fail with ErrZoneUnavailable when it has
// no instance, or none that is healthy or due for its probe.
type Zones struct {
	// Local is this consumer's zone; "" disables zone-aware picking.
	Local string
	// MetaKey is the registry metadata key holding an instance's zone; ""
	// means "zone".
	MetaKey string
	// MinHealthyPercent is how much of its needed share of the healthy
	// instances the local zone may lack and still keep every request,
	// 1-100; 0 means 100 (any deficit spills, proportionally).
	MinHealthyPercent int
	// MinClusterSize is the fewest instances in the view for zone-aware
	// picking to apply (Envoy's min_cluster_size); 0 means 6.
	MinClusterSize int
	// Strict keeps requests in the local zone whatever its health.
	Strict bool
	// PeakWindow is how long a zone that lists fewer instances than before
	// is still judged by its former size: a zone counts as the largest
	// number of instances it listed in the views of the last PeakWindow (a
	// size it lost is forgotten PeakWindow after it fell below it). Longer
	// than an instance takes to come back (a restart, a rescheduled pod),
	// short enough that a zone scaled down on purpose stops spilling soon.
	// 0 means 5m; negative judges each zone by the current view alone.
	PeakWindow time.Duration
}

// DefaultZonePeakWindow is the default Zones.PeakWindow.
const DefaultZonePeakWindow = 5 * time.Minute

// zoneSplit is a candidate set split by zone (immutable, part of an
// endpointSet).
type zoneSplit struct {
	local, remote *endpointSet
	// sizes are the sizes the zones are judged by (see Zones), in steps
	// ending one after the other as the sizes they remember are forgotten;
	// past the last, the current counts. Empty when no zone lost instances
	// within PeakWindow.
	sizes []sizeSpan
}

// sizeSpan is the local and remote zones' sizes until a monoClock reading.
type sizeSpan struct {
	until         time.Duration
	local, remote int
}

// sizes returns the local zone's size and the other zones' together at
// now, a monoClock reading, as the spill judges them (see Zones).
func (z *zoneSplit) sizesAt(now time.Duration) (local, remote int) {
	for _, s := range z.sizes {
		if now < s.until {
			return s.local, s.remote
		}
	}
	return len(z.local.eps), len(z.remote.eps)
}

// zonePeaks remembers each zone's instance counts over the last PeakWindow
// (guarded by Transport.mu).
type zonePeaks map[string]*zonePeak

// zonePeak is one zone's count in the latest view and the larger counts it
// had within PeakWindow: in order of their end, strictly decreasing, each
// larger than cur (a smaller one, or one that ends sooner, never decides).
type zonePeak struct {
	cur  int
	lost []sizeStep
}

// sizeStep is a count a zone had, remembered until a monoClock reading.
type sizeStep struct {
	n     int
	until time.Duration
}

// size returns the zone's size at now, a monoClock reading: the largest
// count not yet forgotten.
func (p *zonePeak) size(now time.Duration) int {
	for _, s := range p.lost {
		if now < s.until {
			return s.n
		}
	}
	return p.cur
}

// observe records the view's count of each zone at now, a monoClock
// reading, with window the PeakWindow (> 0).
func (zp zonePeaks) observe(counts map[string]int, now, window time.Duration) {
	for zone := range counts {
		if zp[zone] == nil {
			zp[zone] = &zonePeak{}
		}
	}
	for zone, p := range zp {
		n := counts[zone]
		if n < p.cur {
			p.lost = slices.DeleteFunc(p.lost, func(s sizeStep) bool { return s.n <= p.cur })
			p.lost = append(p.lost, sizeStep{n: p.cur, until: now + window})
		}
		p.cur = n
		p.lost = slices.DeleteFunc(p.lost, func(s sizeStep) bool { return s.n <= n || s.until <= now })
		if n == 0 && len(p.lost) == 0 {
			delete(zp, zone)
		}
	}
}

// spans returns the local zone's size and the others' together, from now
// until the last remembered count is forgotten (see zoneSplit.sizes).
func (zp zonePeaks) spans(local string, now time.Duration) []sizeSpan {
	var ends []time.Duration
	for _, p := range zp {
		for _, s := range p.lost {
			ends = append(ends, s.until)
		}
	}
	slices.Sort(ends)
	ends = slices.Compact(ends)
	spans := make([]sizeSpan, 0, len(ends))
	for _, end := range ends {
		at := max(now, end-1) // the sizes just before end
		sp := sizeSpan{until: end}
		for zone, p := range zp {
			if zone == local {
				sp.local = p.size(at)
			} else {
				sp.remote += p.size(at)
			}
		}
		spans = append(spans, sp)
	}
	return spans
}

func (z Zones) withDefaults() (Zones, error) {
	if z.MinHealthyPercent < 0 || z.MinHealthyPercent > 100 {
		return z, fmt.Errorf("consumer: Options.Zones.MinHealthyPercent %d: want 0 (default 100) to 100", z.MinHealthyPercent)
	}
	if z.MinClusterSize < 0 {
		return z, fmt.Errorf("consumer: Options.Zones.MinClusterSize %d: want >= 0 (0: default 6)", z.MinClusterSize)
	}
	z.MetaKey = cmpOr(z.MetaKey, "zone")
	z.MinHealthyPercent = cmpOr(z.MinHealthyPercent, 100)
	z.MinClusterSize = cmpOr(z.MinClusterSize, 6)
	z.PeakWindow = cmpOr(z.PeakWindow, DefaultZonePeakWindow)
	return z, nil
}

// split returns the zone split of eps (with ramp as the set's slow-start
// flag), or nil when zone-aware picking does not apply to it. It records
// the zones' counts in peaks at now, a monoClock reading.
func (z Zones) split(eps []*endpoint, ramp bool, peaks zonePeaks, now time.Duration) *zoneSplit {
	if z.Local == "" {
		return nil
	}
	if z.PeakWindow > 0 {
		counts := map[string]int{}
		for _, ep := range eps {
			counts[ep.zone]++
		}
		peaks.observe(counts, now, z.PeakWindow)
	}
	if len(eps) < z.MinClusterSize && !z.Strict {
		return nil
	}
	s := &zoneSplit{local: &endpointSet{ramp: ramp}, remote: &endpointSet{ramp: ramp}}
	for _, ep := range eps {
		if ep.zone == z.Local {
			s.local.eps = append(s.local.eps, ep)
		} else {
			s.remote.eps = append(s.remote.eps, ep)
		}
	}
	if len(s.local.eps) == 0 && !z.Strict {
		return nil
	}
	s.sizes = peaks.spans(z.Local, now)
	return s
}

// zoneSplitLocked returns the zone split of eps (see Zones.split) at now, a
// monoClock reading, and logs when the local zone lists fewer instances
// than in the previous view while a larger size is remembered: its share
// is then judged by that size, and the deficit spills.
func (t *Transport) zoneSplitLocked(eps []*endpoint, ramp bool, now time.Duration) *zoneSplit {
	local := t.opts.Zones.Local
	before := 0
	if p := t.peaks[local]; p != nil {
		before = p.cur
	}
	zs := t.opts.Zones.split(eps, ramp, t.peaks, now)
	if p := t.peaks[local]; p != nil && p.cur < before && p.size(now) > p.cur {
		t.log.Info("consumer: the local zone lists fewer instances than it had; judging its share of the traffic by its former size, the deficit spills to the other zones",
			"service", t.service, "zone", local, "instances", p.cur, "had", p.size(now),
			"peak_window_ms", t.opts.Zones.PeakWindow.Milliseconds())
	}
	return zs
}

// zonePick picks from a zone-split set: the local zone while it has the
// healthy instances its share of the traffic needs, else the local zone for
// its healthy share of the requests and the other zones for the rest (see
// Zones); a local instance due for its probe takes a spilled request. A nil
// endpoint without error lets pick fall back to the whole set.
func (t *Transport) zonePick(z *zoneSplit, tried []*endpoint) (ep *endpoint, probe bool, err error) {
	local, remote := z.local, z.remote
	healthy := countHealthy(local.eps)
	if t.opts.Zones.Strict {
		if len(local.eps) > 0 {
			if ep, probe = t.pickIn(local, tried); ep != nil {
				return ep, probe, nil
			}
		}
		return nil, false, fmt.Errorf("%w: zone %q, %d instance(s), %d healthy", ErrZoneUnavailable, t.opts.Zones.Local, len(local.eps), healthy)
	}
	var now time.Duration
	nl, nr := len(local.eps), len(remote.eps)
	if len(z.sizes) > 0 {
		now = t.clock.now()
		nl, nr = z.sizesAt(now)
	}
	if t.staysLocal(healthy, nl, countHealthy(remote.eps), nr) {
		if ep, probe = t.pickIn(local, tried); ep != nil {
			return ep, probe, nil
		}
	}
	if ep = t.dueProbe(local, tried, &now); ep != nil {
		return ep, true, nil
	}
	if ep = t.refusedProbe(local, tried, &now); ep != nil {
		return ep, false, nil
	}
	ep, probe = t.pickIn(remote, tried)
	return ep, probe, nil
}

// refusedProbe returns an instance of set whose ejection the cap refused
// (panic mode in its zone) and that has had no request for
// BaseEjectionTime, now taken: zone-aware picks count such an instance as
// unhealthy and spill its share, so without this nothing would tell when it
// answers again (a success ends its refusal). nil when none is due.
func (t *Transport) refusedProbe(set *endpointSet, tried []*endpoint, now *time.Duration) *endpoint {
	for _, ep := range set.eps {
		if !ep.refused.Load() || ep.state.Load() != stateHealthy || slices.Contains(tried, ep) {
			continue
		}
		if *now == 0 {
			*now = t.clock.now()
		}
		if u := ep.until.Load(); int64(*now) >= u && ep.until.CompareAndSwap(u, int64(*now+t.opts.Outlier.BaseEjectionTime)) {
			return ep
		}
	}
	return nil
}

// staysLocal decides whether one request stays in the local zone, given
// the healthy instances and the size of the local zone (hl of nl) and of
// the others (hr of nr), sizes as Zones judges them (the largest counts of
// the last PeakWindow). The local zone needs the share nl/(nl+nr) of the
// healthy instances and has hl/(hl+hr); when it has less (by more than
// MinHealthyPercent allows), it keeps the fraction have/need of the
// requests, hl*(nl+nr) / ((hl+hr)*nl): a round robin of its own (spreads)
// picks exactly that many out of every (hl+hr)*nl requests.
func (t *Transport) staysLocal(hl, nl, hr, nr int) bool {
	if hr == 0 || nl == 0 {
		return true // nowhere healthy to spill to
	}
	keep, of := uint64(hl*(nl+nr)), uint64((hl+hr)*nl)
	if keep*100 >= of*uint64(t.opts.Zones.MinHealthyPercent) {
		return true
	}
	k := t.zoneRR.Add(1) % of
	return k*keep%of < keep
}

// countHealthy counts the endpoints that are neither ejected nor refused
// ejection by the cap (failing all the same).
func countHealthy(eps []*endpoint) int {
	n := 0
	for _, e := range eps {
		if e.state.Load() == stateHealthy && !e.refused.Load() {
			n++
		}
	}
	return n
}
