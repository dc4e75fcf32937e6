package registry

import (
	"context"
	"maps"
	"net"
	"slices"
	"strconv"
	"time"
)

// MetaReadyAt is the registration metadata key under which a registrar
// publishes when its instance became READY, as RFC 3339 UTC with nanoseconds
// (time.RFC3339Nano). The key uses only letters and '_' so that Consul's
// service-meta rules and kratos's metadata accept it.
//
// The rule, the same for every registrar: the value is the time of the
// latest transition to READY (its lifecycle.Transition.At, or the time the
// registrar received it if At is zero). An instance READY again after
// EJECTED publishes the new time, and does so before it is back in rotation;
// the value does not change while the instance stays READY or EJECTED, nor
// when the registry lost the instance and it is registered again. Consumers
// read it (Instance.ReadyAt) to ramp an instance's share of traffic (slow
// start): a new instance, and again one back from EJECTED, as Envoy's slow
// start does for an endpoint that passes its health checks again. Since a
// registrar gets only the latest transition (latest wins), an EJECTED and
// READY again that both happen while a registry call is in flight may reach
// it as READY alone: the instance never left discovery, yet it publishes the
// new time and ramps again. That errs on the side of less traffic.
const MetaReadyAt = "drainkit_ready_at"

// IdentityHeader is the HTTP response header in which a provider built on
// drainkit names itself, "<service>/<instance id>" (service names contain no
// '/'): the root package's HTTP listeners send it when the program registers
// (the first registrar's service and ID), and package consumer checks it
// against the service it called, so that an address now served by another
// service (a recycled pod IP) never answers for it.
const IdentityHeader = "Drainkit-Instance"

// IdentityMetadata is IdentityHeader for gRPC: the response header metadata
// key (lower case, as gRPC metadata keys are) in which a gRPC provider built
// on drainkit (grpcdrain.WithIdentity) names itself with the same value,
// checked by consumer/grpcresolver.
const IdentityMetadata = "drainkit-instance"

// ConsumerHeader is the HTTP request header in which a consumer built on
// drainkit (package consumer, consumer.Options.Name) names itself, so that
// a provider's propagation window tells apart the consumers that share an
// IP (a node's pods behind SNAT, a sidecar, one host running several
// services): httpdrain reports it as the caller's identity
// (lifecycle.Caller.Identity) in place of the User-Agent.
const ConsumerHeader = "Drainkit-Consumer"

// Instance is one instance of a service as a registry lists it to consumers.
type Instance struct {
	// ID is the instance's registry ID (see InstanceID).
	ID string `json:"id"`
	// Address is the host or IP consumers dial; with Consul, the node's
	// address when the service registered none.
	Address string `json:"address"`
	// Port is the port consumers dial.
	Port int `json:"port"`
	// Tags are the registry's tags, if it has any; nil otherwise.
	Tags []string `json:"tags,omitempty"`
	// Meta is the registration metadata (MetaReadyAt among it); nil when
	// there is none.
	Meta map[string]string `json:"meta,omitempty"`
	// Endpoints are every endpoint the instance registered, each named by
	// its scheme, in registration order (kratos's endpoints list in etcd,
	// scheme-keyed tagged addresses in Consul); nil when the registration
	// names none, and then Address and Port serve every protocol. One
	// registration per instance: a process serving HTTP and gRPC is one
	// Instance with an "http" and a "grpc" endpoint, and each consumer takes
	// its own with ForScheme. Address and Port are the endpoint the source
	// chose (registry/etcd: its WatchOptions.Scheme; registry/consul: the
	// service's own address and port).
	Endpoints []Endpoint `json:"endpoints,omitempty"`
}

// HostPort returns Address and Port joined for dialling ("10.0.0.7:8080",
// "[::1]:8080").
func (i Instance) HostPort() string {
	return net.JoinHostPort(i.Address, strconv.Itoa(i.Port))
}

// ReadyAt returns the time the instance last became READY, from
// Meta[MetaReadyAt] (see there for the rule); ok is false when the key is
// missing or does not parse.
func (i Instance) ReadyAt() (t time.Time, ok bool) {
	s, found := i.Meta[MetaReadyAt]
	if !found {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t, err == nil
}

// View is what a consumer knows about one service's instances: evidence with
// a revision, an age and a source, not the truth.
//
// After a failed query, Err is set and the rest is the last good view (an error
// is not an empty list): Instances, Revision and Received are those of the last
// successful answer, and ErrAt is when the query failed. Before any successful
// answer, Revision is 0, Received is zero and Instances is nil.
type View struct {
	// Service is the service name.
	Service string `json:"service"`
	// Instances are the instances in rotation, sorted by ID; empty (not nil)
	// after a successful answer that listed none.
	Instances []Instance `json:"instances"`
	// Revision orders views from one source within one Epoch: Consul's
	// X-Consul-Index, etcd's store revision. Within an epoch a larger
	// revision is newer and a smaller one is older; 0 means unknown (a
	// static list), and such a view is ordered by Received alone.
	Revision uint64 `json:"revision"`
	// Epoch counts the times the source's revision sequence started again
	// during one Watch call: the source increments it when it sees its
	// registry's revision go backwards (a Consul agent that lost its state
	// or restored a snapshot, a stale server behind a load balancer, an
	// etcd cluster restored from a snapshot), and every later view of that
	// Watch call carries the new value, delivered or not. A view of a
	// higher epoch is newer than any view of a lower one, whatever their
	// revisions; within an epoch, Revision alone orders. A source whose
	// revisions never go backwards (a static list, a counter) leaves it 0.
	// A new Watch call starts again at 0: a consumer orders the views of
	// each Watch call apart (see Source).
	Epoch uint64 `json:"epoch"`
	// Received is when the answer arrived at this process.
	Received time.Time `json:"received"`
	// Source names where the view came from: "consul", "etcd", "static", or
	// what a user-supplied source says.
	Source string `json:"source"`
	// Err is the last query's error, nil if it succeeded; ErrAt its time.
	Err   error     `json:"-"`
	ErrAt time.Time `json:"err_at,omitzero"`
}

// Age returns how old the view's evidence is at now: now - Received, or 0
// before any successful answer.
func (v View) Age(now time.Time) time.Duration {
	if v.Received.IsZero() {
		return 0
	}
	return now.Sub(v.Received)
}

// OlderThan reports whether v is older than u, two views of the same Watch
// call of one source (see Source for the contract): a lower Epoch is older
// whatever the revisions; within an epoch, a lower Revision, or, when
// either revision is 0, an earlier Received.
func (v View) OlderThan(u View) bool {
	switch {
	case v.Epoch != u.Epoch:
		return v.Epoch < u.Epoch
	case v.Revision != 0 && u.Revision != 0:
		return v.Revision < u.Revision
	}
	return !v.Received.IsZero() && v.Received.Before(u.Received)
}

// Has reports whether the view lists an instance with this ID.
func (v View) Has(id string) bool {
	for _, in := range v.Instances {
		if in.ID == id {
			return true
		}
	}
	return false
}

// Source delivers the views of one service, as registry/consul's and
// registry/etcd's watches do.
//
// The order contract, which consumer.Watcher relies on: the views of one
// Watch call are ordered by (Epoch, Revision), so a source must increment
// Epoch whenever its registry's revision goes backwards, before it delivers
// a view with the lower revision; an error view changes nothing in this
// order (it carries the last good view's Epoch and Revision). A lower
// revision that only replays an answer the source already took (a caching
// proxy, a stale read) is no reset: the source drops it rather than
// deliver it in a new epoch (registry/consul does; see its Watch). A consumer
// drops a successful view that is older than the latest one of the same
// Watch call, and takes the first view of a new Watch call whatever its
// revision.
type Source interface {
	// Watch calls fn with the first view and then with every view that
	// differs from the last one delivered (a changed instance list, or an
	// error appearing or clearing), one call at a time from one goroutine,
	// until ctx is done; it then returns ctx.Err(). fn must return quickly.
	// Watch returns another error at once only for unusable arguments.
	Watch(ctx context.Context, fn func(View)) error
}

// SourceFunc adapts a function to a Source.
type SourceFunc func(ctx context.Context, fn func(View)) error

// Watch calls f(ctx, fn).
func (f SourceFunc) Watch(ctx context.Context, fn func(View)) error { return f(ctx, fn) }

// Equal reports whether i and j are the same registration as a consumer
// sees it: ID, address, port, tags, meta and endpoints.
func (i Instance) Equal(j Instance) bool {
	return i.ID == j.ID && i.Address == j.Address && i.Port == j.Port && slices.Equal(i.Tags, j.Tags) &&
		maps.Equal(i.Meta, j.Meta) && slices.Equal(i.Endpoints, j.Endpoints)
}
