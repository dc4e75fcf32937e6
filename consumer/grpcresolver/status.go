package grpcresolver

import "github.com/drainkit/drainkit/consumer"

// Status is a snapshot of one resolver, the one a grpc.ClientConn of a
// target has. In JSON, durations are integer nanoseconds under keys ending
// in _ns (consumer.WatchStatus).
type Status struct {
	// WatchStatus is the status of the resolver's Watcher.
	consumer.WatchStatus
	// Addresses is the number of addresses last given to grpc-go: the
	// view's instances serving an endpoint of EndpointScheme, less those
	// ejected for answering as another service.
	Addresses int `json:"addresses"`
	// Endpoints is the view's instances left out for serving no endpoint
	// of EndpointScheme, and the schemes they offer; all of them
	// (Endpoints.Blind) leaves grpc-go no address, and every call fails
	// ("no children to pick from").
	Endpoints consumer.SchemeGap `json:"endpoints"`
}

// Status returns the status of each resolver b has built for service (a
// target's path without its leading '/'), one per grpc.ClientConn of such
// a target that is not closed, in no particular order; nil when there is
// none.
func (b *Builder) Status(service string) []Status {
	b.mu.Lock()
	rs := make([]*res, 0, len(b.resolvers[service]))
	for r := range b.resolvers[service] {
		rs = append(rs, r)
	}
	b.mu.Unlock()
	var out []Status
	for _, r := range rs {
		s := Status{WatchStatus: r.w.Status(), Endpoints: r.check.Gap()}
		r.mu.Lock()
		s.Addresses = r.addrs
		r.mu.Unlock()
		out = append(out, s)
	}
	return out
}
