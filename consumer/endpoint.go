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
	tr       *http.Transport
	ready    time.Time // READY time from the registry; zero if unknown

	inflight atomic.Int64 // requests in flight (LeastRequest only)
	fails    atomic.Int32 // consecutive connect-level failures
	state    atomic.Int32
	until    atomic.Int64 // end of the ejection, unix ns

	// Guarded by Transport.mu.
	ejections    int       // ejection multiplier
	lastRestored time.Time // when a probe last restored it
	refused      bool      // its ejection was refused by the cap (panic mode)
}

func newEndpoint(in registry.Instance, base *http.Transport) *endpoint {
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
	return ep
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

// rampWeight is the endpoint's slow-start weight in (0, 1] at now.
func (ep *endpoint) rampWeight(now time.Time, s SlowStart) float64 {
	if ep.ready.IsZero() {
		return 1
	}
	el := now.Sub(ep.ready)
	if el >= s.Window {
		return 1
	}
	w := math.Pow(max(float64(el), 0)/float64(s.Window), 1/s.Aggression)
	return max(w, s.MinWeightPercent/100)
}

// admit decides, for one pick, whether a ramping endpoint takes it.
func (ep *endpoint) admit(now time.Time, s SlowStart) bool {
	w := ep.rampWeight(now, s)
	return w >= 1 || rand.Float64() < w
}

// inRamp reports whether the endpoint is in its slow-start window at now.
func (ep *endpoint) inRamp(now time.Time, s SlowStart) bool {
	return s.Window > 0 && !ep.ready.IsZero() && now.Sub(ep.ready) < s.Window
}
