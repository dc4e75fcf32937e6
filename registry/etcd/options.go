package etcd

import (
	"cmp"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/registry"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Options configure a Registrar. Start from DefaultOptions and change what
// differs; Validate (called by New) rejects out-of-range values with a
// *budget.RangeError naming the configuration key.
type Options struct {
	// Service is the service name (key registry.service, required): the
	// second segment of the key and kratos's ServiceInstance.Name. 1 to 255
	// letters, digits, '-', '_' and '.'.
	Service string
	// ID is the instance ID, the key's last segment. Empty means
	// registry.InstanceID(Service, Port), new for every process: see the
	// package documentation on identity before setting it.
	ID string
	// Address is the host consumers dial. Empty means the first
	// non-loopback IP address of this host's interfaces, else its hostname.
	Address string
	// Port is the port consumers dial (1 to 65535).
	Port int
	// Scheme is the endpoint's URL scheme, e.g. "http" or "grpc" (default
	// "http"): the endpoint registered is Scheme://Address:Port, as kratos
	// servers write it.
	Scheme string
	// Extra are the instance's other endpoints, after the first
	// (Scheme://Address:Port), e.g. {Scheme: "grpc", Port: 9090} for a
	// process that serves HTTP and gRPC: one registration per instance, one
	// key and one lease holding every endpoint, as kratos registers an app
	// with several servers. An empty Address means Address. Schemes are
	// unique across all the endpoints (registry.CheckEndpoints). nil by
	// default: one endpoint.
	Extra []registry.Endpoint
	// Version is kratos's ServiceInstance.Version, which kratos's version
	// filters match ("" by default; Register sets registry.etcd.version or
	// the program's version).
	Version string
	// Meta is registered as kratos's ServiceInstance.Metadata, with
	// registry.MetaReadyAt added; that key is reserved.
	Meta map[string]string

	// Prefix is the key prefix, kratos's namespace (key
	// registry.etcd.prefix, default "/microservices"): the instance's key is
	// Prefix/Service/ID. It must start with '/' and not end with one.
	Prefix string
	// TTL is the lease's time to live (key registry.etcd.ttl, default 10s;
	// whole seconds, >= 2s and <= 24h). A process that stops keeping its
	// lease alive (kill -9, partition) leaves discovery this long after its
	// last keep-alive.
	TTL time.Duration
	// KeepAliveInterval is the time between keep-alives (key
	// registry.etcd.keepalive_interval, > 0 and <= TTL/3). 0 means TTL/3.
	KeepAliveInterval time.Duration
	// CallTimeout bounds each call to etcd (key registry.etcd.call_timeout,
	// > 0 and <= KeepAliveInterval, so that a keep-alive always lands within
	// the TTL). 0 means the smaller of KeepAliveInterval and 2s.
	CallTimeout time.Duration

	// Client is the etcd client configuration: Endpoints (key
	// registry.etcd.endpoints, at least one), DialTimeout, TLS, Username and
	// Password. New copies it. A nil Logger is replaced by a no-op logger:
	// the Registrar logs failures itself, through Logger below.
	Client clientv3.Config
	// Logger receives registration events and failures. nil means
	// slog.Default(). The password is never logged.
	Logger *slog.Logger
}

// Defaults and limits.
const (
	// DefaultPrefix is kratos's default namespace.
	DefaultPrefix = "/microservices"
	// DefaultTTL is the default lease TTL: a SIGKILLed instance leaves
	// discovery within 10s, as with the Consul registrar's TTL check and
	// go-zero's etcd lease, while a keep-alive every 3.3s survives two lost
	// keep-alives and an etcd leader election (about 1s with etcd's default
	// 1s election timeout) without the lease expiring.
	DefaultTTL = 10 * time.Second
	// MinTTL is etcd's own minimum lease TTL with its default timings
	// (1.5 election timeouts of 1s, rounded up to whole seconds): the server
	// silently raises a shorter TTL to it, so a shorter setting would not
	// mean what it says.
	MinTTL = 2 * time.Second
	// DefaultCallTimeout caps the default CallTimeout.
	DefaultCallTimeout = 2 * time.Second
	// DefaultScheme is the default endpoint scheme.
	DefaultScheme = "http"
)

// DefaultOptions returns Options for service on port with the kratos layout
// (prefix /microservices, scheme http), TTL 10s, a keep-alive every TTL/3 and
// CallTimeout 2s. Client.Endpoints must still be set.
func DefaultOptions(service string, port int) Options {
	return Options{Service: service, Port: port, Scheme: DefaultScheme, Prefix: DefaultPrefix, TTL: DefaultTTL,
		Client: clientv3.Config{DialTimeout: 5 * time.Second}}
}

// withDefaults fills the zero fields that have a default (not TTL: a zero TTL
// is an error).
func (o Options) withDefaults() Options {
	if o.Scheme == "" {
		o.Scheme = DefaultScheme
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.KeepAliveInterval == 0 && o.TTL > 0 {
		o.KeepAliveInterval = o.TTL / 3
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = min(o.KeepAliveInterval, DefaultCallTimeout)
	}
	return o
}

// Validate returns a *budget.RangeError for the first field out of range
// (after applying the defaults for zero fields), or nil.
func (o Options) Validate() error {
	o = o.withDefaults()
	d := func(v time.Duration) string { return v.String() }
	re := func(key, value, allowed string) error {
		return &budget.RangeError{Key: key, Value: value, Allowed: allowed}
	}
	switch {
	case !validName(o.Service):
		return re("registry.service", strconv.Quote(o.Service), "must be 1 to 255 letters, digits, '-', '_' and '.'")
	case o.Port < 1 || o.Port > 65535:
		return re("registry.port", strconv.Itoa(o.Port), "must be between 1 and 65535")
	case !validEndpoints(o.Client.Endpoints):
		return re("registry.etcd.endpoints", strconv.Quote(strings.Join(o.Client.Endpoints, ",")),
			"must list at least one etcd client address, e.g. 127.0.0.1:2379 or https://etcd-0:2379, none empty")
	case !strings.HasPrefix(o.Prefix, "/") || strings.HasSuffix(o.Prefix, "/"):
		return re("registry.etcd.prefix", strconv.Quote(o.Prefix), "must start with '/' and not end with '/', e.g. /microservices")
	case o.TTL < MinTTL || o.TTL > budget.MaxDuration || o.TTL%time.Second != 0:
		return re("registry.etcd.ttl", d(o.TTL), "must be whole seconds, >= "+d(MinTTL)+" (etcd's minimum lease TTL) and <= "+d(budget.MaxDuration))
	case o.KeepAliveInterval <= 0 || o.KeepAliveInterval > o.TTL/3:
		return re("registry.etcd.keepalive_interval", d(o.KeepAliveInterval), "must be > 0 and <= registry.etcd.ttl/3 ("+d(o.TTL/3)+")")
	case o.CallTimeout <= 0 || o.CallTimeout > o.KeepAliveInterval:
		return re("registry.etcd.call_timeout", d(o.CallTimeout), "must be > 0 and <= registry.etcd.keepalive_interval ("+d(o.KeepAliveInterval)+")")
	case !validName(o.Scheme):
		return re("registry.etcd.scheme", strconv.Quote(o.Scheme), "must be a URL scheme such as http or grpc")
	case strings.Contains(o.ID, "/"):
		return re("registry.id", strconv.Quote(o.ID), "must not contain '/'")
	}
	if err := registry.CheckEndpoints(o.endpoints()); err != nil {
		return re("Options.Extra", strconv.Quote(fmt.Sprint(o.endpoints())), err.Error())
	}
	if _, ok := o.Meta[metaReadyAtKey]; ok {
		return re("registry.meta", metaReadyAtKey, "meta key "+metaReadyAtKey+" is reserved by drainkit")
	}
	return nil
}

func validEndpoints(eps []string) bool {
	if len(eps) == 0 {
		return false
	}
	for _, e := range eps {
		if strings.TrimSpace(e) == "" {
			return false
		}
	}
	return true
}

// validName reports whether s is 1 to 255 ASCII letters, digits, '-', '_'
// and '.': registry.ValidServiceName's rule, for the service and the scheme.
func validName(s string) bool { return registry.ValidServiceName(s) }

// SetEndpoints makes eps the instance's endpoints: the first gives Scheme,
// Address (when not empty) and Port, the others Extra. eps is typically
// drainkit.Bound.Endpoints, every service listener of the process. An empty
// eps changes nothing.
func (o *Options) SetEndpoints(eps []registry.Endpoint) {
	if len(eps) > 0 {
		o.Scheme, o.Address, o.Port, o.Extra = eps[0].Scheme, cmp.Or(eps[0].Address, o.Address), eps[0].Port, eps[1:]
	}
}

// endpoints returns every endpoint registered, the first one first, with
// empty addresses filled with Address.
func (o Options) endpoints() []registry.Endpoint {
	return registry.RegisteredEndpoints(o.Scheme, o.Address, o.Port, o.Extra)
}
