package drill

import (
	"context"
	"fmt"
	"time"

	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/etcd"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// EtcdDiscovery learns the set of instances from etcd, as a consumer using
// registry/etcd's watch does: one read of the service's keys (kratos's
// layout, /microservices/<service>/<id>) at a revision, then a watch from the
// next revision. The replicas register under a lease and revoke it
// themselves; Add only teaches the drill which replica listens on which
// address. Its views (Watch) are the watch's, with Source "etcd" and etcd's
// store revision.
type EtcdDiscovery struct {
	*viewFeed
	addr    string
	service string
	client  *clientv3.Client
	cancel  context.CancelFunc
	done    chan struct{}

	ids    map[string]int // host:port -> replica ID, guarded by viewFeed.mu
	latest registry.View  // the watch's last view, guarded by viewFeed.mu
}

// NewEtcdDiscovery starts watching service on the etcd client endpoint addr
// (host:port).
func NewEtcdDiscovery(addr, service string) (*EtcdDiscovery, error) {
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{addr}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("--etcd %s: %w", addr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &EtcdDiscovery{
		viewFeed: newViewFeed(service, etcd.SourceName),
		addr:     addr, service: service, client: client, cancel: cancel,
		done: make(chan struct{}),
		ids:  map[string]int{},
	}
	go func() {
		defer close(d.done)
		_ = etcd.Watch(ctx, client, service, etcd.WatchOptions{}, func(v registry.View) {
			d.mu.Lock()
			defer d.mu.Unlock()
			d.latest = v
			d.rebuildLocked()
		})
	}()
	return d, nil
}

// Describe implements Discovery.
func (d *EtcdDiscovery) Describe() string {
	return fmt.Sprintf("etcd watch (a read at a revision, then a watch from the next one, on %s at %s)",
		etcd.ServicePrefix(etcd.DefaultPrefix, d.service), d.addr)
}

func (d *EtcdDiscovery) rebuildLocked() {
	eps := make([]Endpoint, 0, len(d.latest.Instances))
	for _, in := range d.latest.Instances {
		hp := in.HostPort()
		eps = append(eps, Endpoint{Replica: d.ids[hp], Addr: hp})
	}
	v := d.latest
	if v.Service == "" {
		v.Service, v.Source = d.service, etcd.SourceName
	}
	d.setLocked(v, eps)
}

// Add implements Discovery.
func (d *EtcdDiscovery) Add(r *Replica) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ids[r.HTTPAddr] = r.ID
	d.rebuildLocked()
}

// Close implements Discovery.
func (d *EtcdDiscovery) Close() {
	d.cancel()
	<-d.done
	_ = d.client.Close()
}
