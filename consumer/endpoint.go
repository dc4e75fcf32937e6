package consumer

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/drainkit/drainkit/registry"
)

// Outlier states of an endpoint.
const (
	stateHealthy int32 = iota
	stateEjected
	stateProbing // ejection over, one probe request in flight
)

// endpoint is one instance of the candidate set, with its own connection
// pool and outlier state.
type endpoint struct {
	id, addr string
	zone     string // registry metadata under Zones.MetaKey; "" if none
	tr       *http.Transport
	ready    time.Time     // READY time from the registry (the provider's wall clock); zero if unknown
	ramps    bool          // slow start ramps it: ready known, and less than Window old when first seen
	rampFrom time.Duration // monoClock reading at which its ramp began (see rampStart)

	inflight atomic.Int64 // requests in flight (LeastRequest only)
	// refused: its ejection was refused by the cap (panic mode). Written
	// under Transport.mu; read by zone-aware picks, for which it is not
	// healthy (see Zones).
	refused atomic.Bool
	fails   atomic.Int32 // consecutive connect-level failures
	state   atomic.Int32
	until   atomic.Int64 // end of the ejection (or, refused, of the wait for its next zone probe), a monoClock reading in ns

	// Guarded by Transport.mu.
	ejections    int       // ejection multiplier
	lastRestored time.Time // when a probe last restored it
	outage       bool      // ejected during panic mode: the ejection ends with it
}

// newEndpoint returns the endpoint of in, first seen at now (a time.Now()
// value, read as clock's reading for slow start).
func newEndpoint(in registry.Instance, base *http.Transport, clock monoClock, now time.Time, s SlowStart) *endpoint {
	tr := base.Clone()
	dial := base.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, &dialError{err: err}
		}
		return c, nil
	}
	ep := &endpoint{id: in.ID, addr: in.HostPort(), tr: tr}
	ep.ready, _ = in.ReadyAt()
	ep.rampFrom, ep.ramps = rampStart(clock, now, ep.ready, s.Window)
	return ep
}

// rampStart turns a provider's READY time into the start of its slow-start
// ramp on this process's monotonic clock, at now (the time it is first
// seen): the one place where another host's wall clock meets this one's.
//
// The skew between the two clocks shifts the ramp by as much, and is
// tolerated within these bounds: a provider whose clock is behind by d
// looks d older, so its ramp is d shorter (none at all once d reaches the
// Window); a provider whose clock is ahead by d looks d younger, so its ramp
// ends up to d later, except that a READY time in the future, which only a
// skewed clock produces, counts as now: a ramp never lasts longer than
// Window after this consumer first saw that READY time. With NTP on both
// hosts (skew of milliseconds) against a Window of seconds, the effect is
// nil. A READY time older than Window, however absurdly old (the zero time,
// a clock reset to 1970), means no ramp, as for an unknown READY time. From
// then on the ramp runs on the monotonic clock, so a step of this host's
// wall clock does not move it either.
func rampStart(clock monoClock, now, ready time.Time, window time.Duration) (from time.Duration, ramps bool) {
	if ready.IsZero() || window <= 0 {
		return 0, false
	}
	el := now.Round(0).Sub(ready) // wall against wall; saturates for absurd values
	if el >= window {
		return 0, false
	}
	el = max(el, 0) // READY in the future: the ramp starts now
	return clock.at(now) - el, true
}

// dialError marks an error of the dial itself: nothing of the request was
// written, so it may go to another instance whatever its method.
type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// notWritten reports whether err proves that no byte of the request reached
// a server. net/http already retries, on a fresh connection, a request that
// found its reused connection closed before writing it (and idempotent ones
// whose reused connection closed before answering), so what reaches us
// unwritten is a failed dial (refused, timed out, unreachable).
func notWritten(err error) bool {
	var de *dialError
	return errors.As(err, &de)
}

// rampWeight is the endpoint's slow-start weight in (0, 1] at now, a
// monoClock reading.
func (ep *endpoint) rampWeight(now time.Duration, s SlowStart) float64 {
	if !ep.inRamp(now, s) {
		return 1
	}
	el := now - ep.rampFrom
	w := math.Pow(max(float64(el), 0)/float64(s.Window), 1/s.Aggression)
	return max(w, s.MinWeightPercent/100)
}

// admit decides, for one pick at now (a monoClock reading), whether a
// ramping endpoint takes it.
func (ep *endpoint) admit(now time.Duration, s SlowStart) bool {
	w := ep.rampWeight(now, s)
	return w >= 1 || rand.Float64() < w
}

// inRamp reports whether the endpoint is in its slow-start window at now, a
// monoClock reading.
func (ep *endpoint) inRamp(now time.Duration, s SlowStart) bool {
	return ep.ramps && now-ep.rampFrom < s.Window
}
