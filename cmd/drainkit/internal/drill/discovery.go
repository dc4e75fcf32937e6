package drill

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/drainkit/drainkit/registry"
)

// Endpoint is one instance a consumer can send requests to.
type Endpoint struct {
	Replica int    // the drill's replica ID
	Addr    string // host:port of the service listener
	// GRPCAddr is the host:port of its gRPC listener, "" when it serves
	// none (Config.Protocol http).
	GRPCAddr string
}

// Source is a consumer's way to learn the set of instances. Endpoints returns
// the current set, sorted by replica ID; callers must not modify it.
type Source interface {
	Endpoints() []Endpoint
}

// Discovery is a Source that the rolling restart can also add replicas to and
// wait on, and that delivers its answers as registry views (registry.Source)
// to consumers that watch rather than pull. A new discovery (etcd, ...) is
// one more implementation and a case in Config.newDiscovery.
type Discovery interface {
	Source
	registry.Source
	// Add starts tracking a replica (it becomes an endpoint once discovery
	// finds it ready).
	Add(r *Replica)
	// WaitListed blocks until the replica is among the Endpoints, or ctx ends.
	WaitListed(ctx context.Context, id int) error
	// Close stops all background work and waits for it.
	Close()
	// Describe says how consumers learn about instances, for the report.
	Describe() string
	// answered and revision read the discovery's answers (viewFeed).
	answered(id int, from time.Time, listed bool) (at time.Time, revision uint64, ok bool)
	revision() uint64
}

// ProbeDiscovery learns the set of instances the way a Kubernetes endpoints
// controller and load balancer do: it probes each replica's GET /readyz every
// Interval (each replica on its own schedule, as the kubelet does), lists a
// replica after one success and drops it after FailureThreshold failures in a
// row. A probe that does not answer within the interval (at most 1 s) fails.
// Its views (Watch) have Source "readiness-probes", a revision counting the
// changes, Received set when the list changed, and per instance the ID "r<N>"
// and registry.MetaReadyAt, when the probes first found it ready.
type ProbeDiscovery struct {
	*viewFeed
	interval  time.Duration
	threshold int
	client    *http.Client

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	targets  map[int]*probeTarget // guarded by viewFeed.mu
	failures []probeFailure       // guarded by viewFeed.mu
}

// probeFailure is one failed readiness probe.
type probeFailure struct {
	replica int
	at      time.Time
}

// ProbeFailure is one failed readiness probe of a drill: the replica and
// when, as an offset from the drill's start.
type ProbeFailure struct {
	Replica int
	At      time.Duration
}

// Failures returns the failed probes so far, as offsets from start.
func (d *ProbeDiscovery) Failures(start time.Time) []ProbeFailure {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]ProbeFailure, len(d.failures))
	for i, f := range d.failures {
		out[i] = ProbeFailure{Replica: f.replica, At: f.at.Sub(start)}
	}
	return out
}

type probeTarget struct {
	ep      Endpoint
	url     string
	ready   bool
	readyAt time.Time // when first found ready
	fails   int
	cancel  context.CancelFunc
}

// NewProbeDiscovery returns a ProbeDiscovery; interval > 0, threshold >= 1.
func NewProbeDiscovery(interval time.Duration, threshold int, client *http.Client) *ProbeDiscovery {
	ctx, cancel := context.WithCancel(context.Background())
	return &ProbeDiscovery{
		viewFeed: newViewFeed("", "readiness-probes"),
		interval: interval, threshold: threshold, client: client,
		ctx: ctx, cancel: cancel,
		targets: map[int]*probeTarget{},
	}
}

// Describe implements Discovery.
func (d *ProbeDiscovery) Describe() string {
	return fmt.Sprintf("readiness probes (GET /readyz every %s, dropped after %d failures), like a Kubernetes endpoints controller",
		d.interval, d.threshold)
}

// Add implements Discovery: the replica is probed at once, then every interval.
func (d *ProbeDiscovery) Add(r *Replica) {
	ctx, cancel := context.WithCancel(d.ctx)
	t := &probeTarget{ep: Endpoint{Replica: r.ID, Addr: r.HTTPAddr, GRPCAddr: r.GRPCAddr}, url: "http://" + r.AdminAddr + "/readyz", cancel: cancel}
	d.mu.Lock()
	d.targets[r.ID] = t
	d.mu.Unlock()
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.watch(ctx, t)
	}()
}

func (d *ProbeDiscovery) watch(ctx context.Context, t *probeTarget) {
	tick := time.NewTicker(d.interval)
	defer tick.Stop()
	timeout := min(d.interval, time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, timeout)
		ok := probe(pctx, d.client, t.url)
		cancel()
		if ctx.Err() != nil {
			return
		}
		d.update(t, ok)
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (d *ProbeDiscovery) update(t *probeTarget, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	was := t.ready
	if ok {
		t.fails = 0
		t.ready = true
		if t.readyAt.IsZero() {
			t.readyAt = time.Now()
		}
	} else {
		d.failures = append(d.failures, probeFailure{replica: t.ep.Replica, at: time.Now()})
		t.fails++
		if t.fails >= d.threshold {
			t.ready = false
		}
	}
	if was != t.ready {
		d.rebuildLocked()
	}
}

func (d *ProbeDiscovery) rebuildLocked() {
	eps := make([]Endpoint, 0, len(d.targets))
	insts := make([]registry.Instance, 0, len(d.targets))
	for _, t := range d.targets {
		if !t.ready {
			continue
		}
		eps = append(eps, t.ep)
		host, port := splitHostPort(t.ep.Addr)
		insts = append(insts, registry.Instance{
			ID: fmt.Sprintf("r%d", t.ep.Replica), Address: host, Port: port,
			Meta:      map[string]string{registry.MetaReadyAt: t.readyAt.UTC().Format(time.RFC3339Nano)},
			Endpoints: t.ep.endpoints(),
		})
	}
	slices.SortFunc(eps, func(a, b Endpoint) int { return a.Replica - b.Replica })
	slices.SortFunc(insts, func(a, b registry.Instance) int { return strings.Compare(a.ID, b.ID) })
	v := d.view
	v.Instances, v.Revision, v.Received = insts, v.Revision+1, time.Now()
	d.setLocked(v, eps)
}

// Close implements Discovery.
func (d *ProbeDiscovery) Close() {
	d.cancel()
	d.wg.Wait()
}

// splitHostPort splits a replica's "127.0.0.1:port" (port 0 if it does not
// parse, which cannot happen for addresses the drill made).
func splitHostPort(addr string) (string, int) {
	host, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	return host, port
}
