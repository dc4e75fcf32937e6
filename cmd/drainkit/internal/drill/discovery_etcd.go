package drill

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/drainkit/drainkit/registry/etcd"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// EtcdDiscovery learns the set of instances from etcd, as a consumer using
// registry/etcd's watch does: one read of the service's keys (kratos's
// layout, <prefix>/<service>/<id>, /microservices by default) at a revision, then a watch from the
// next revision. The replicas register under a lease and revoke it
// themselves; Add only teaches the drill which replica listens on which
// address. Its views (Watch) are the watch's, with Source "etcd" and etcd's
// store revision.
type EtcdDiscovery struct {
	*registryFeed
	addr   string
	prefix string
	client *clientv3.Client
	cancel context.CancelFunc
	done   chan struct{}
}

// NewEtcdDiscovery starts watching service under the key prefix (""
// meaning etcd.DefaultPrefix) on the etcd client endpoint addr (host:port).
func NewEtcdDiscovery(addr, prefix, service string) (*EtcdDiscovery, error) {
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{addr}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("--etcd %s: %w", addr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &EtcdDiscovery{
		registryFeed: newRegistryFeed(service, etcd.SourceName),
		addr:         addr, prefix: prefix, client: client, cancel: cancel,
		done: make(chan struct{}),
	}
	go func() {
		defer close(d.done)
		// Scheme http: the feed reads an instance's Address as its HTTP
		// address (registryFeed), so instances without one are left out.
		_ = etcd.Watch(ctx, client, service, etcd.WatchOptions{Prefix: prefix, Scheme: etcd.DefaultScheme}, d.receive)
	}()
	return d, nil
}

// Describe implements Discovery.
func (d *EtcdDiscovery) Describe() string {
	return fmt.Sprintf("etcd watch (a read at a revision, then a watch from the next one, on %s at %s)",
		etcd.ServicePrefix(cmp.Or(d.prefix, etcd.DefaultPrefix), d.service), d.addr)
}

// Close implements Discovery.
func (d *EtcdDiscovery) Close() {
	d.cancel()
	<-d.done
	_ = d.client.Close()
}
