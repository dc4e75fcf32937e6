package drill

import (
	"fmt"

	"github.com/drainkit/drainkit/registry/consul"
	"github.com/hashicorp/consul/api"
)

// ConsulDiscovery learns the set of instances from Consul, as a consumer
// using registry/consul's watch does: blocking queries on the passing
// instances of the service. The replicas register and deregister themselves;
// Add only teaches the drill which replica listens on which address. Its
// views (Watch) are the watch's, with Source "consul" and the Consul index as
// the revision.
type ConsulDiscovery struct {
	*registryFeed
	addr string
	cfg  *api.Config
	w    *consul.Watcher
	done chan struct{}
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
		registryFeed: newRegistryFeed(service, "consul"),
		addr:         addr, cfg: cfg,
		w:    consul.NewWatcher(client, service, consul.WatchOptions{}),
		done: make(chan struct{}),
	}
	go func() {
		defer close(d.done)
		for v := range d.w.C {
			d.receive(v)
		}
	}()
	return d, nil
}

// Describe implements Discovery.
func (d *ConsulDiscovery) Describe() string {
	return fmt.Sprintf("consul watch (blocking queries on the passing instances of %s at %s)", d.service, d.addr)
}

// Close implements Discovery.
func (d *ConsulDiscovery) Close() {
	d.w.Close()
	<-d.done
	if d.cfg.Transport != nil {
		d.cfg.Transport.CloseIdleConnections()
	}
}
