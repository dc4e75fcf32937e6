package drill

import (
	"context"
	"fmt"
	"sync"

	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/consul"
	"github.com/hashicorp/consul/api"
)

// ConsulDiscovery learns the set of instances from Consul, as a consumer
// using registry/consul's watch does: blocking queries on the passing
// instances of the service. The replicas register and deregister themselves;
// Add only teaches the drill which replica listens on which address.
type ConsulDiscovery struct {
	addr    string
	service string
	cfg     *api.Config
	w       *consul.Watcher
	done    chan struct{}

	mu      sync.Mutex
	ids     map[string]int // host:port -> replica ID
	latest  registry.View
	view    []Endpoint
	changed chan struct{}
}

// NewConsulDiscovery starts watching service on the agent at addr.
func NewConsulDiscovery(addr, service string) (*ConsulDiscovery, error) {
	cfg := api.DefaultConfig()
	cfg.Address = addr
	client, err := api.NewClient(cfg)
	if err != nil {
		return nil, fmt.Errorf("--consul %s: %w", addr, err)
	}
	d := &ConsulDiscovery{
		addr: addr, service: service, cfg: cfg,
		w:       consul.NewWatcher(client, service, consul.WatchOptions{}),
		done:    make(chan struct{}),
		ids:     map[string]int{},
		changed: make(chan struct{}),
	}
	go func() {
		defer close(d.done)
		for v := range d.w.C {
			d.mu.Lock()
			d.latest = v
			d.rebuildLocked()
			d.mu.Unlock()
		}
	}()
	return d, nil
}

// Describe implements Discovery.
func (d *ConsulDiscovery) Describe() string {
	return fmt.Sprintf("consul watch (blocking queries on the passing instances of %s at %s)", d.service, d.addr)
}

func (d *ConsulDiscovery) rebuildLocked() {
	view := make([]Endpoint, 0, len(d.latest.Instances))
	for _, in := range d.latest.Instances {
		hp := in.HostPort()
		view = append(view, Endpoint{Replica: d.ids[hp], Addr: hp})
	}
	d.view = view
	close(d.changed)
	d.changed = make(chan struct{})
}

// Add implements Discovery.
func (d *ConsulDiscovery) Add(r *Replica) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ids[r.HTTPAddr] = r.ID
	d.rebuildLocked()
}

// Endpoints implements Source.
func (d *ConsulDiscovery) Endpoints() []Endpoint {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.view
}

// WaitListed implements Discovery.
func (d *ConsulDiscovery) WaitListed(ctx context.Context, id int) error {
	return waitListed(ctx, id, func() ([]Endpoint, <-chan struct{}) {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.view, d.changed
	})
}

// Close implements Discovery.
func (d *ConsulDiscovery) Close() {
	d.w.Close()
	<-d.done
	if d.cfg.Transport != nil {
		d.cfg.Transport.CloseIdleConnections()
	}
}
