package consumer

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drainkit/drainkit/registry"
)

// ErrDegraded is returned, with FailFast, while the Watcher is degraded.
var ErrDegraded = errors.New("consumer: degraded: the service's source has failed for longer than the maximum staleness")

// ErrNoInstance is returned when no candidate instance is left to try.
var ErrNoInstance = errors.New("consumer: no instance to send the request to")

// Transport is an http.RoundTripper for the clients of one service: requests
// name the service as their host (http://orders/path for service
// "orders"), and each goes to an instance of the Watcher's candidate view.
// See RoundTrip for what is retried; Options for balancing, outlier
// ejection and slow start. Each instance has its own connection pool; when
// an instance leaves the view its idle connections are closed (and so are
// those that become idle later). A provider's "Connection: close" and
// HTTP/2 GOAWAY are handled by net/http, which opens a new connection for
// the next request.
//
// Only connect-level failures (no HTTP response) count towards ejection; an
// HTTP 5xx is an answer, passed on as it is.
type Transport struct {
	w       *Watcher
	service string
	// registryService is the service's name in the registry, which
	// providers name in their identity header: the Watcher's Service, else
	// service.
	registryService string
	opts            Options
	log             *slog.Logger
	budget          *budget
	unsub           func()
	tel             *telemetry // nil without a MeterProvider or TracerProvider
	schemes         *SchemeCheck
	named           consumerHeader // Options.Name on every attempt

	clock  monoClock // ejection ends and slow-start ramps are its readings
	set    atomic.Pointer[endpointSet]
	rr     atomic.Uint64
	spills atomic.Uint64 // spill's own round robin (see spill)
	zoneRR atomic.Uint64 // the local zone's share of the requests (see staysLocal)
	viewed atomic.Bool   // a view has been applied

	requests        atomic.Uint64
	retries         atomic.Uint64
	budgetExhausted atomic.Uint64
	failures        atomic.Uint64
	ejections       atomic.Uint64
	panics          atomic.Uint64
	mismatches      atomic.Uint64

	mu      sync.Mutex // guards byID, peaks, refused, closed and endpoints' outlier fields
	byID    map[string]*endpoint
	peaks   zonePeaks // the zones' counts of recent views (Zones.PeakWindow)
	refused int       // endpoints whose ejection the cap refused: panic mode while > 0
	closed  bool
}

// endpointSet is an immutable candidate set, swapped atomically.
type endpointSet struct {
	eps   []*endpoint
	ramp  bool       // slow start applies to this set
	zones *zoneSplit // nil unless zone-aware picking applies
}

// NewTransport returns a Transport for the service whose instances w
// watches; service is the host requests use (w's service name when "").
// The Transport follows w until Close; it does not close w.
func NewTransport(w *Watcher, service string, opts Options) (*Transport, error) {
	if w == nil {
		return nil, errors.New("consumer: NewTransport: nil Watcher")
	}
	if service == "" {
		service = w.opts.Service
	}
	if service == "" {
		return nil, errors.New("consumer: NewTransport: empty service name (neither the argument nor WatcherOptions.Service)")
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	t := &Transport{w: w, service: service, registryService: cmpOr(w.opts.Service, service), opts: opts, log: opts.Logger, clock: newMonoClock(),
		budget: newBudget(opts.Budget, time.Now()), byID: map[string]*endpoint{}, peaks: zonePeaks{}}
	t.schemes = NewSchemeCheck(t.registryService, opts.Scheme, opts.Logger)
	t.named = newConsumerHeader(opts.Name)
	t.set.Store(&endpointSet{})
	if t.tel, err = newTelemetry(t); err != nil {
		return nil, fmt.Errorf("consumer: NewTransport: telemetry instruments: %w", err)
	}
	t.unsub = w.Subscribe(t.update)
	return t, nil
}

// Close stops following the watcher and closes every idle connection. It
// is idempotent; requests after it fail with ErrNoInstance.
func (t *Transport) Close() error {
	t.unsub()
	t.tel.close()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for id, ep := range t.byID {
		ep.tr.CloseIdleConnections()
		delete(t.byID, id)
	}
	t.set.Store(&endpointSet{})
	return nil
}

// CloseIdleConnections closes the idle connections of every instance.
func (t *Transport) CloseIdleConnections() {
	for _, ep := range t.set.Load().eps {
		ep.tr.CloseIdleConnections()
	}
}

// update swaps in the candidate set of view v: instances keep their
// endpoint (pool, outlier state) by ID, unless their address or READY time
// changed; those that left are retired.
func (t *Transport) update(v registry.View) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	now := time.Now()
	mono := t.clock.at(now)
	next := make(map[string]*endpoint, len(v.Instances))
	eps := make([]*endpoint, 0, len(v.Instances))
	ramping := 0
	for _, in := range t.schemes.Dialled(v) { // those serving no endpoint of Scheme left out
		ep := t.byID[in.ID]
		zone := in.Meta[t.opts.Zones.MetaKey]
		if ready, _ := in.ReadyAt(); ep == nil || ep.addr != in.HostPort() || !ep.ready.Equal(ready) || ep.zone != zone {
			ep = newEndpoint(in, t.opts.Base, t.clock, now, t.opts.SlowStart) // new, moved or restarted (fields stay immutable)
			ep.zone = zone
			t.logReadyAhead(ep, now)
		}
		if ep.inRamp(mono, t.opts.SlowStart) {
			ramping++
		}
		next[in.ID] = ep
		eps = append(eps, ep)
	}
	for id, ep := range t.byID {
		if next[id] != ep {
			t.retireLocked(ep)
		}
	}
	t.byID = next
	t.viewed.Store(true)
	ramp := ramping > 0 && 2*ramping <= len(eps)
	t.set.Store(&endpointSet{eps: eps, ramp: ramp, zones: t.zoneSplitLocked(eps, ramp, mono)})
}

// readyAheadLogged is how far in the future a READY time must be before the
// Transport logs the provider's clock as ahead: less is ordinary skew.
const readyAheadLogged = time.Second

// logReadyAhead warns when ep's READY time is in the future at now: the
// provider's clock is ahead of this one, and its ramp starts now instead
// (see rampStart).
func (t *Transport) logReadyAhead(ep *endpoint, now time.Time) {
	if ahead := ep.ready.Sub(now.Round(0)); ep.ramps && ahead > readyAheadLogged {
		t.log.Warn("consumer: an instance's READY time is in the future (its host's clock is ahead of this one); its slow start begins now",
			"service", t.service, "instance", ep.id, "addr", ep.addr, "ready_at", ep.ready, "ahead_ms", ahead.Milliseconds())
	}
}

// retireLocked closes a departed instance's idle connections; net/http
// also closes those that become idle later, as no request asks it for one.
func (t *Transport) retireLocked(ep *endpoint) {
	ep.tr.CloseIdleConnections()
	t.unrefuseLocked(ep)
}
