package drill

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Endpoint is one instance a consumer can send requests to.
type Endpoint struct {
	Replica int    // the drill's replica ID
	Addr    string // host:port of the service listener
}

// Source is a consumer's way to learn the set of instances. Endpoints returns
// the current set, sorted by replica ID; callers must not modify it.
type Source interface {
	Endpoints() []Endpoint
}

// Discovery is a Source that the rolling restart can also add replicas to and
// wait on.
type Discovery interface {
	Source
	// Add starts tracking a replica (it becomes an endpoint once discovery
	// finds it ready).
	Add(r *Replica)
	// WaitListed blocks until the replica is among the Endpoints, or ctx ends.
	WaitListed(ctx context.Context, id int) error
	// Close stops all background work and waits for it.
	Close()
	// Describe says how consumers learn about instances, for the report.
	Describe() string
}

// ProbeDiscovery learns the set of instances the way a Kubernetes endpoints
// controller and load balancer do: it probes each replica's GET /readyz every
// Interval (each replica on its own schedule, as the kubelet does), lists a
// replica after one success and drops it after FailureThreshold failures in a
// row. A probe that does not answer within the interval (at most 1 s) fails.
type ProbeDiscovery struct {
	interval  time.Duration
	threshold int
	client    *http.Client

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	targets map[int]*probeTarget
	view    []Endpoint
	changed chan struct{} // closed and replaced on every change of view
}

type probeTarget struct {
	ep     Endpoint
	url    string
	ready  bool
	fails  int
	cancel context.CancelFunc
}

// NewProbeDiscovery returns a ProbeDiscovery; interval > 0, threshold >= 1.
func NewProbeDiscovery(interval time.Duration, threshold int, client *http.Client) *ProbeDiscovery {
	ctx, cancel := context.WithCancel(context.Background())
	return &ProbeDiscovery{
		interval: interval, threshold: threshold, client: client,
		ctx: ctx, cancel: cancel,
		targets: map[int]*probeTarget{},
		changed: make(chan struct{}),
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
	t := &probeTarget{ep: Endpoint{Replica: r.ID, Addr: r.HTTPAddr}, url: "http://" + r.AdminAddr + "/readyz", cancel: cancel}
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
	} else {
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
	view := make([]Endpoint, 0, len(d.targets))
	for _, t := range d.targets {
		if t.ready {
			view = append(view, t.ep)
		}
	}
	slices.SortFunc(view, func(a, b Endpoint) int { return a.Replica - b.Replica })
	d.view = view
	close(d.changed)
	d.changed = make(chan struct{})
}

// Endpoints implements Source.
func (d *ProbeDiscovery) Endpoints() []Endpoint {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.view
}

// WaitListed implements Discovery.
func (d *ProbeDiscovery) WaitListed(ctx context.Context, id int) error {
	return waitListed(ctx, id, func() ([]Endpoint, <-chan struct{}) {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.view, d.changed
	})
}

// Close implements Discovery.
func (d *ProbeDiscovery) Close() {
	d.cancel()
	d.wg.Wait()
}

// waitListed waits until id is in the view that snap returns; snap also
// returns a channel that is closed when the view changes.
func waitListed(ctx context.Context, id int, snap func() ([]Endpoint, <-chan struct{})) error {
	for {
		view, changed := snap()
		for _, ep := range view {
			if ep.Replica == id {
				return nil
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("replica %d never listed by discovery: %w", id, ctx.Err())
		}
	}
}
