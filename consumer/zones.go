package consumer

import (
	"errors"
	"fmt"
	"time"
)

// ErrZoneUnavailable is returned, with Zones.Strict, when the local zone has
// no instance to send a request to.
var ErrZoneUnavailable = errors.New("consumer: no instance available in the local zone, and Zones.Strict keeps requests in it")

// Zones configures zone-aware picking, after Envoy's zone-aware routing: a
// consumer in zone Local sends its requests to the instances of its own zone
// (an instance's zone is its registry metadata under MetaKey) while at
// least MinHealthyPercent of them are healthy (not ejected), and to the
// other zones' instances below that; instances of the local zone whose
// ejection is over still get their half-open probe, so the zone takes its
// traffic back once it recovers. Outlier ejection counts per zone: at most
// Outlier.MaxEjectionPercent of a zone's instances are ejected at once,
// beyond which that zone is in panic mode.
//
// Zone-aware picking applies when Local is set, the view lists at least
// MinClusterSize instances, and at least one is in the local zone;
// otherwise every instance is a candidate alike. With Strict, requests
// never leave the local zone: they fail with ErrZoneUnavailable when it has
// no instance, or none that is healthy or due for its probe.
//
// Out of scope: Envoy's proportional spill by the share of capacity and
// clients per zone (this Transport knows neither); below the threshold,
// all of the local zone's traffic moves to the other zones.
type Zones struct {
	// Local is this consumer's zone; "" disables zone-aware picking.
	Local string
	// MetaKey is the registry metadata key holding an instance's zone; ""
	// means "zone".
	MetaKey string
	// MinHealthyPercent of the local zone's instances must be healthy for
	// requests to stay in it, 1-100; 0 means 70 (with zones of two or
	// three instances, one ejection spills).
	MinHealthyPercent int
	// MinClusterSize is the fewest instances in the view for zone-aware
	// picking to apply (Envoy's min_cluster_size); 0 means 6.
	MinClusterSize int
	// Strict keeps requests in the local zone whatever its health.
	Strict bool
}

// zoneSplit is a candidate set split by zone (immutable, part of an
// endpointSet).
type zoneSplit struct {
	local, remote *endpointSet
}

func (z Zones) withDefaults() (Zones, error) {
	if z.MinHealthyPercent < 0 || z.MinHealthyPercent > 100 {
		return z, fmt.Errorf("consumer: Options.Zones.MinHealthyPercent %d: want 0 (default 70) to 100", z.MinHealthyPercent)
	}
	if z.MinClusterSize < 0 {
		return z, fmt.Errorf("consumer: Options.Zones.MinClusterSize %d: want >= 0 (0: default 6)", z.MinClusterSize)
	}
	z.MetaKey = cmpOr(z.MetaKey, "zone")
	z.MinHealthyPercent = cmpOr(z.MinHealthyPercent, 70)
	z.MinClusterSize = cmpOr(z.MinClusterSize, 6)
	return z, nil
}

// split returns the zone split of eps (with ramp as the set's slow-start
// flag), or nil when zone-aware picking does not apply to it.
func (z Zones) split(eps []*endpoint, ramp bool) *zoneSplit {
	if z.Local == "" || len(eps) < z.MinClusterSize && !z.Strict {
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
	return s
}

// zonePick picks from a zone-split set: the local zone while healthy
// enough, else a due probe of the local zone or the other zones. A nil
// endpoint without error lets pick fall back to the whole set.
func (t *Transport) zonePick(z *zoneSplit, tried []*endpoint) (ep *endpoint, probe bool, err error) {
	local := z.local
	healthy := 0
	for _, e := range local.eps {
		if e.state.Load() == stateHealthy {
			healthy++
		}
	}
	if t.opts.Zones.Strict {
		if len(local.eps) > 0 {
			if ep, probe = t.pickIn(local, tried); ep != nil {
				return ep, probe, nil
			}
		}
		return nil, false, fmt.Errorf("%w: zone %q, %d instance(s), %d healthy", ErrZoneUnavailable, t.opts.Zones.Local, len(local.eps), healthy)
	}
	if healthy*100 >= len(local.eps)*t.opts.Zones.MinHealthyPercent || len(z.remote.eps) == 0 {
		ep, probe = t.pickIn(local, tried)
		return ep, probe, nil
	}
	var now time.Duration
	if ep = t.dueProbe(local, tried, &now); ep != nil {
		return ep, true, nil
	}
	ep, probe = t.pickIn(z.remote, tried)
	return ep, probe, nil
}
