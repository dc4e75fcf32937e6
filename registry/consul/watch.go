package consul

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/registry"
	"github.com/hashicorp/consul/api"
)

// SourceName is the registry.View Source of every view this package
// delivers.
const SourceName = "consul"

// WatchOptions tune Watch, NewWatcher and NewSource. The zero value is ready
// to use.
type WatchOptions struct {
	// WaitTime is the longest one blocking query waits for a change. 0 means
	// 1m; Consul caps it at 10m.
	WaitTime time.Duration
	// MinBackoff and MaxBackoff bound the jittered exponential backoff after
	// failed queries: the first wait is about MinBackoff, doubling up to
	// MaxBackoff, and it resets after a success. 0 means 100ms and 500ms:
	// a recovered agent is seen within MaxBackoff of answering again, and a
	// down local agent costs two refused connections a second.
	MinBackoff, MaxBackoff time.Duration
	// Tag restricts the watch to instances with this tag; "" means all.
	Tag string
	// Query holds further query options (Datacenter, Token, AllowStale,
	// Filter, ...). nil means none; WaitIndex and WaitTime are always set by
	// the watch.
	Query *api.QueryOptions
}

// Defaults for zero WatchOptions fields.
const (
	DefaultWaitTime   = time.Minute
	DefaultMinBackoff = 100 * time.Millisecond
	DefaultMaxBackoff = 500 * time.Millisecond
)

func (o WatchOptions) withDefaults() WatchOptions {
	if o.WaitTime <= 0 {
		o.WaitTime = DefaultWaitTime
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	return o
}

func (o WatchOptions) poller(client *api.Client, service string) *poller {
	o = o.withDefaults()
	p := &poller{client: client, service: service, tag: o.Tag, wait: o.WaitTime,
		bo: syncx.Backoff{Min: o.MinBackoff, Max: o.MaxBackoff}}
	if o.Query != nil {
		p.base = *o.Query
	}
	return p
}

// Watch follows the passing instances of service with blocking queries on
// /v1/health/service/<service>?passing and calls fn with a registry.View
// (Source "consul", Revision the X-Consul-Index):
//
//   - with the first answer (or the first error), then only when the view
//     changed: a different instance list (IDs, addresses, ports, tags or
//     meta), an error appearing, changing or clearing. An answer that
//     changes nothing but the index, or a timed-out query, delivers nothing.
//   - after a failed query, with Err set and the last good instances kept;
//     the next query waits a jittered, exponentially growing backoff and does
//     not block, so recovery is delivered as soon as the agent answers again
//     (within MaxBackoff), not after a whole WaitTime.
//
// Index rules (Consul's blocking-query guidance): an index lower than the
// last answer's (an agent that lost its state or restored a snapshot, a
// stale server behind a load balancer with AllowStale) resets the wait index
// to 0 and starts a new registry.View.Epoch: the views that follow carry the
// lower Revision and the incremented Epoch, so that a consumer ordering
// views by (Epoch, Revision) takes them, a deregistration included, instead
// of waiting for the index to climb past the old one. Epoch starts at 0 and
// counts within one Watch call. A lower index is no reset when the answer
// replays one already taken in the epoch (the same index and the same
// instances, no failed query since the last answer: a proxy or cache in
// front of Consul serving a recorded answer, a stale read): it is dropped,
// never delivered, so an instance removed since (a drained one) does not
// come back; the next query starts from index 0. An index of 0 is replaced
// by 1; queries that answer at once are spaced at least 100ms apart, so the
// loop never spins.
//
// fn runs in Watch's goroutine; the next query starts when it returns. Watch
// returns ctx.Err() when ctx is done, without calling fn for that, or an
// error at once if service is empty or client is nil.
func Watch(ctx context.Context, client *api.Client, service string, opts WatchOptions, fn func(registry.View)) error {
	if client == nil {
		return errors.New("consul: Watch: nil client")
	}
	if service == "" {
		return errors.New("consul: Watch: empty service name")
	}
	var (
		good      = registry.View{Service: service, Source: SourceName} // the last successful answer
		last      registry.View                                         // the last view delivered
		delivered bool
	)
	return opts.poller(client, service).run(ctx, func(a answer) bool {
		if a.replay {
			return true
		}
		v := good
		if a.err != nil {
			v.Err, v.ErrAt = a.err, a.at
		} else {
			v.Instances, v.Revision, v.Epoch, v.Received = a.instances, a.index, a.epoch, a.at
			good = v
		}
		if !delivered || changed(last, v) {
			last, delivered = v, true
			fn(v)
		}
		return true
	})
}

// NewSource returns a registry.Source whose Watch runs Watch(ctx, client,
// service, opts, fn).
func NewSource(client *api.Client, service string, opts WatchOptions) registry.Source {
	return registry.SourceFunc(func(ctx context.Context, fn func(registry.View)) error {
		return Watch(ctx, client, service, opts, fn)
	})
}

// changed reports whether b differs from a in what a consumer acts on: the
// error (presence or text) or the instances. Revision and times alone are
// not a change.
func changed(a, b registry.View) bool {
	if (a.Err == nil) != (b.Err == nil) || (a.Err != nil && a.Err.Error() != b.Err.Error()) {
		return true
	}
	if (a.Instances == nil) != (b.Instances == nil) {
		return true // no answer yet versus an answer listing none
	}
	return !slices.EqualFunc(a.Instances, b.Instances, registry.Instance.Equal)
}

// instances converts the health endpoint's entries, sorted by ID (then
// address and port); a service registered without an address gets its
// node's address, which is what consumers dial.
func instances(entries []*api.ServiceEntry) []registry.Instance {
	out := make([]registry.Instance, 0, len(entries))
	for _, e := range entries {
		if e.Service == nil {
			continue
		}
		in := registry.Instance{ID: e.Service.ID, Address: e.Service.Address, Port: e.Service.Port,
			Tags: e.Service.Tags, Meta: e.Service.Meta}
		if in.Address == "" && e.Node != nil {
			in.Address = e.Node.Address
		}
		in.Endpoints = endpoints(e.Service.TaggedAddresses, in.Address)
		out = append(out, in)
	}
	// IDs are unique per agent, not per datacenter: the address and port
	// make the order of equal answers equal (see fingerprint).
	slices.SortFunc(out, func(a, b registry.Instance) int {
		return cmp.Or(cmp.Compare(a.ID, b.ID), cmp.Compare(a.Address, b.Address), cmp.Compare(a.Port, b.Port))
	})
	return out
}

// endpoints decodes the endpoints of a registration with scheme-keyed tagged
// addresses (kratos's encoding, and Options.Extra's): each tagged address
// whose value is a URL of its key's scheme, sorted by scheme since the map
// has no order. Consul's own tagged addresses (lan, wan, lan_ipv4, virtual,
// ...) are plain addresses, not URLs, and are skipped. A URL without host
// gets addr, the service's address. nil when there are none.
func endpoints(tagged map[string]api.ServiceAddress, addr string) []registry.Endpoint {
	var eps []registry.Endpoint
	for key, ta := range tagged {
		ep, err := registry.ParseEndpoint(ta.Address)
		if err != nil || !strings.EqualFold(ep.Scheme, key) {
			continue
		}
		ep.Address = cmp.Or(ep.Address, addr)
		eps = append(eps, ep)
	}
	slices.SortFunc(eps, func(a, b registry.Endpoint) int { return cmp.Compare(a.Scheme, b.Scheme) })
	return eps
}
