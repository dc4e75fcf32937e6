package drill

import "github.com/drainkit/drainkit/registry"

// registryFeed is what ConsulDiscovery and EtcdDiscovery share: a viewFeed
// fed by a registry watch, whose endpoints name the replica that listens on
// each instance's host:port.
type registryFeed struct {
	*viewFeed
	service string
	source  string         // the View's Source before the watch's first view
	ids     map[string]int // host:port -> replica ID, guarded by viewFeed.mu
	latest  registry.View  // the watch's last view, guarded by viewFeed.mu
}

func newRegistryFeed(service, source string) *registryFeed {
	return &registryFeed{viewFeed: newViewFeed(service, source), service: service, source: source, ids: map[string]int{}}
}

// receive publishes the watch's view v.
func (f *registryFeed) receive(v registry.View) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.latest = v
	f.rebuildLocked()
}

func (f *registryFeed) rebuildLocked() {
	eps := make([]Endpoint, 0, len(f.latest.Instances))
	for _, in := range f.latest.Instances {
		hp := in.HostPort()
		ep := Endpoint{Replica: f.ids[hp], Addr: hp}
		if g, ok := in.ForScheme(grpcEndpointScheme); ok && len(in.Endpoints) > 0 {
			ep.GRPCAddr = g.HostPort()
		}
		eps = append(eps, ep)
	}
	v := f.latest
	if v.Service == "" {
		v.Service, v.Source = f.service, f.source
	}
	f.setLocked(v, eps)
}

// Add implements Discovery.
func (f *registryFeed) Add(r *Replica) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids[r.HTTPAddr] = r.ID
	f.rebuildLocked()
}
