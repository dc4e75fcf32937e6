package drill

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/drainkit/drainkit/registry/nacos"
)

// NacosDiscovery learns the set of instances from a Nacos server in the two
// ways the drill compares. Its views (Watch), which drainkit consumers
// follow, are registry/nacos's Source: the open API's healthy list read at
// once, on every push of a subscription and every 2 s, Source "nacos" and
// the server's lastRefTime as the revision. Its Endpoints, which naive
// consumers use, are a Nacos 1.x client's: the same list polled every
// interval (5 s by default) and kept when a poll fails. The replicas
// register and deregister themselves (registry/nacos's Registrar); Add only
// teaches the drill which replica listens on which address.
type NacosDiscovery struct {
	*registryFeed
	addr   string
	api    *nacosAPI
	poll   *nacosPoller
	cancel context.CancelFunc
	done   chan struct{}
}

// NewNacosDiscovery starts following service on the Nacos server srv (one
// HTTP address, its login if any), polling its open API every poll for
// naive consumers.
func NewNacosDiscovery(srv nacos.Server, service string, poll time.Duration) (*NacosDiscovery, error) {
	opts := nacos.WatchOptions{Server: srv}
	if err := opts.Server.Validate(); err != nil || len(srv.Addrs) != 1 {
		return nil, fmt.Errorf("--nacos %s: %v", strings.Join(srv.Addrs, ","), err)
	}
	addr := srv.Addrs[0]
	api := newNacosAPI(srv)
	ctx, cancel := context.WithCancel(context.Background())
	d := &NacosDiscovery{
		registryFeed: newRegistryFeed(service, nacos.SourceName),
		addr:         addr, api: api, poll: newNacosPoller(api, service, poll),
		cancel: cancel, done: make(chan struct{}),
	}
	go func() {
		defer close(d.done)
		_ = nacos.Watch(ctx, service, opts, d.receive)
	}()
	return d, nil
}

// Describe implements Discovery.
func (d *NacosDiscovery) Describe() string {
	return fmt.Sprintf("nacos (%s on %s): drainkit consumers follow registry/nacos's Source; naive consumers poll the open API every %s, as a Nacos 1.x client does",
		d.service, d.addr, d.poll.interval)
}

// Endpoints implements Source: the naive consumers' list, as last polled.
func (d *NacosDiscovery) Endpoints() []Endpoint {
	addrs, _, _, _ := d.poll.list()
	d.mu.Lock()
	defer d.mu.Unlock()
	eps := make([]Endpoint, 0, len(addrs))
	for _, a := range addrs {
		eps = append(eps, Endpoint{Replica: d.ids[a], Addr: a})
	}
	slices.SortFunc(eps, func(a, b Endpoint) int { return a.Replica - b.Replica })
	return eps
}

// WaitListed implements Discovery: replica id is listed by both ways, so
// that a rolling restart goes on only once either kind of consumer can
// reach the new replica.
func (d *NacosDiscovery) WaitListed(ctx context.Context, id int) error {
	if err := d.registryFeed.WaitListed(ctx, id); err != nil {
		return err
	}
	d.mu.Lock()
	addr := ""
	for a, i := range d.ids {
		if i == id {
			addr = a
		}
	}
	d.mu.Unlock()
	for {
		addrs, polled, changed, err := d.poll.list()
		if slices.Contains(addrs, addr) {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			last := fmt.Sprintf("its last poll listed %d instance(s)", len(addrs))
			switch {
			case err != nil:
				last = fmt.Sprintf("its last poll failed: %v (is the server reachable?)", err)
			case !polled:
				last = "no poll answered (is the server reachable?)"
			}
			return fmt.Errorf("replica %d never listed by the open API's healthy list (polled every %s): %s: %w", id, d.poll.interval, last, ctx.Err())
		}
	}
}

// Close implements Discovery.
func (d *NacosDiscovery) Close() {
	d.cancel()
	<-d.done
	d.poll.close()
	d.api.close()
}
