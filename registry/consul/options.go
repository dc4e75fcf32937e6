package consul

import (
	"cmp"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/registry"
	"github.com/hashicorp/consul/api"
)

// Options configure a Registrar. Start from DefaultOptions and change what
// differs; Validate (called by New) rejects out-of-range values with a
// *budget.RangeError naming the key.
type Options struct {
	// Service is the Consul service name (key registry.service, required).
	Service string
	// ID is the instance ID (key registry.id). Empty means
	// registry.InstanceID(Service, Port), which is what you want: see the
	// package documentation on identity before setting it.
	ID string
	// Address is the address consumers connect to (key registry.address).
	// Empty means the agent's node address. Set it to the IP this process
	// is bound to when it has one of its own (a pod IP): only then are a
	// dead predecessor's registrations on the same address and port removed
	// at start (an empty address is shared by every instance on the agent).
	Address string
	// Port is the port consumers connect to (key registry.port, 1 to 65535).
	// It must be a port this process listens on: predecessors on the same
	// explicit Address and port are removed at start.
	Port int
	// Scheme names the protocol of the endpoint Address:Port, e.g. "http"
	// or "grpc". Empty (the default) with no Extra registers the service as
	// before, with no scheme. Otherwise every endpoint, this one first, is
	// also registered as a tagged address keyed by its scheme whose address
	// is the endpoint's URL ("grpc://10.0.0.7:9090"), as kratos's Consul
	// registry writes them, so that kratos's discovery and drainkit's
	// (registry.Instance.Endpoints) see one instance with every endpoint. An
	// empty Scheme with Extra means "http".
	Scheme string
	// Extra are the instance's other endpoints: one registration (one
	// service, one TTL check) per instance, holding e.g. the HTTP endpoint
	// as Address:Port and the gRPC one as a tagged address. An empty Address
	// means Address; when that is empty too, the tagged address has no host
	// ("grpc://:9090") and drainkit consumers dial the node's address, as
	// for the service's own (kratos's discovery cannot: set Address). Schemes
	// are unique across all the endpoints (registry.CheckEndpoints).
	Extra []registry.Endpoint

	// Tags and Meta are registered as they are (Meta from key
	// registry.meta, see OptionsFrom). Meta keys "drainkit_managed" and
	// registry.MetaReadyAt are reserved: the Registrar sets them (the latter to the time of the
	// latest READY, RFC 3339 UTC with nanoseconds, for consumers' slow start;
	// see registry.MetaReadyAt).
	Tags []string
	Meta map[string]string

	// TTL is the TTL check's time to live (key registry.ttl, default 10s,
	// 1s to 24h; 0 is an error). A process that stops heartbeating turns
	// critical this long after its last heartbeat.
	TTL time.Duration
	// HeartbeatInterval is the time between heartbeats (key
	// registry.heartbeat_interval, > 0 and <= TTL/3). 0 means TTL/3.
	HeartbeatInterval time.Duration
	// CallTimeout bounds each call to the agent (key registry.call_timeout,
	// > 0 and <= HeartbeatInterval, so that a heartbeat always lands within
	// the TTL). 0 means the smaller of HeartbeatInterval and 2s.
	CallTimeout time.Duration
	// DeregisterCriticalServiceAfter makes Consul remove a registration
	// whose check stayed critical this long, e.g. after kill -9 (key
	// registry.deregister_critical_service_after, default 1m, >= 1m and
	// <= 24h; Consul's reaper does not run more often). 0 means 1m. A
	// Registrar that is still alive re-registers if its instance was removed
	// while EJECTED.
	DeregisterCriticalServiceAfter time.Duration
	// KeepPredecessors disables the removal at start of earlier drainkit
	// registrations with the same service, address and port on the same
	// agent. Set it only if several processes share one address and port
	// (SO_REUSEPORT) and each registers separately.
	KeepPredecessors bool

	// Consul is the consul/api client configuration. nil means
	// api.DefaultConfig(), which reads CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN
	// and the other CONSUL_* variables. New copies it; it is not modified.
	Consul *api.Config
	// Logger receives registration events and failures. nil means
	// slog.Default(). The ACL token is never logged.
	Logger *slog.Logger
}

// Defaults used by DefaultOptions and for zero fields.
const (
	DefaultTTL                            = 10 * time.Second
	DefaultCallTimeout                    = 2 * time.Second
	DefaultDeregisterCriticalServiceAfter = time.Minute
	// MinDeregisterCriticalServiceAfter is Consul's floor: its reaper does
	// not remove services sooner.
	MinDeregisterCriticalServiceAfter = time.Minute
	// MinTTL is the shortest TTL accepted.
	MinTTL = time.Second
)

// DefaultOptions returns Options for service on port with TTL 10s, heartbeat
// every TTL/3, CallTimeout 2s and DeregisterCriticalServiceAfter 1m.
func DefaultOptions(service string, port int) Options {
	return Options{Service: service, Port: port, TTL: DefaultTTL, DeregisterCriticalServiceAfter: DefaultDeregisterCriticalServiceAfter}
}

// withDefaults fills the zero fields that have a default (not TTL: a zero TTL
// is an error).
func (o Options) withDefaults() Options {
	if o.HeartbeatInterval == 0 && o.TTL > 0 {
		o.HeartbeatInterval = o.TTL / 3
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = min(o.HeartbeatInterval, DefaultCallTimeout)
	}
	if o.DeregisterCriticalServiceAfter == 0 {
		o.DeregisterCriticalServiceAfter = DefaultDeregisterCriticalServiceAfter
	}
	return o
}

// Validate returns a *budget.RangeError for the first field out of range
// (after applying the defaults for zero fields), then a *SettingError for a
// consul/api setting that could only fail later: an agent address that is
// not one (CONSUL_HTTP_ADDR=::::garbage) or a CA, client certificate, key or
// token file that does not exist (CONSUL_CACERT=/missing.pem), naming the
// environment variable when the value came from it. Consul == nil means the
// settings api.DefaultConfig() reads from the environment. nil if all is
// well.
func (o Options) Validate() error {
	o = o.withDefaults()
	d := func(v time.Duration) string { return v.String() }
	switch {
	case !registry.ValidServiceName(o.Service):
		return &budget.RangeError{Key: "registry.service", Value: strconv.Quote(o.Service),
			Allowed: "must be 1 to 255 letters, digits, '-', '_' and '.'"}
	case o.Port < 1 || o.Port > 65535:
		return &budget.RangeError{Key: "registry.port", Value: strconv.Itoa(o.Port), Allowed: "must be between 1 and 65535"}
	case o.TTL < MinTTL || o.TTL > budget.MaxDuration:
		return &budget.RangeError{Key: "registry.ttl", Value: d(o.TTL), Allowed: "must be >= " + d(MinTTL) + " and <= " + d(budget.MaxDuration)}
	case o.HeartbeatInterval <= 0 || o.HeartbeatInterval > o.TTL/3:
		return &budget.RangeError{Key: "registry.heartbeat_interval", Value: d(o.HeartbeatInterval),
			Allowed: "must be > 0 and <= registry.ttl/3 (" + d(o.TTL/3) + ")"}
	case o.CallTimeout <= 0 || o.CallTimeout > o.HeartbeatInterval:
		return &budget.RangeError{Key: "registry.call_timeout", Value: d(o.CallTimeout),
			Allowed: "must be > 0 and <= registry.heartbeat_interval (" + d(o.HeartbeatInterval) + ")"}
	case o.DeregisterCriticalServiceAfter < MinDeregisterCriticalServiceAfter || o.DeregisterCriticalServiceAfter > budget.MaxDuration:
		return &budget.RangeError{Key: "registry.deregister_critical_service_after", Value: d(o.DeregisterCriticalServiceAfter),
			Allowed: "must be >= " + d(MinDeregisterCriticalServiceAfter) + " and <= " + d(budget.MaxDuration)}
	}
	if eps := o.endpoints(); len(eps) > 0 {
		if err := registry.CheckEndpoints(eps); err != nil {
			return &budget.RangeError{Key: "Options.Extra", Value: strconv.Quote(fmt.Sprint(eps)), Allowed: err.Error()}
		}
	}
	for _, k := range []string{metaManaged, registry.MetaReadyAt} {
		if _, ok := o.Meta[k]; ok {
			return &budget.RangeError{Key: "registry.meta", Value: k, Allowed: "meta key " + k + " is reserved by drainkit"}
		}
	}
	return checkSettings(o.Consul)
}

// SetEndpoints makes eps the instance's endpoints: the first gives Scheme,
// Address (when not empty) and Port, the others Extra. eps is typically
// drainkit.Bound.Endpoints, every service listener of the process. An empty
// eps changes nothing.
func (o *Options) SetEndpoints(eps []registry.Endpoint) {
	if len(eps) > 0 {
		o.Scheme, o.Address, o.Port, o.Extra = eps[0].Scheme, cmp.Or(eps[0].Address, o.Address), eps[0].Port, eps[1:]
	}
}

// endpoints returns every endpoint registered as a tagged address, the
// service's own first, empty addresses filled with Address; nil when
// none is (no Scheme, no Extra).
func (o Options) endpoints() []registry.Endpoint {
	if o.Scheme == "" && len(o.Extra) == 0 {
		return nil
	}
	return registry.RegisteredEndpoints(cmp.Or(o.Scheme, "http"), o.Address, o.Port, o.Extra)
}
