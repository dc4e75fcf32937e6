package nacos

import (
	"cmp"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/registry"
)

// Server says where a Nacos server (or cluster) is and how to reach it: what
// a Registrar and a Source share.
type Server struct {
	// Addrs are the servers' HTTP addresses, "host:port" (key
	// registry.nacos.server_addr; at least one), an IPv6 address in
	// brackets ("[::1]:8848", no zone). Clients of Nacos 2.x and 3.x reach
	// the same server's gRPC port at port+1000.
	Addrs []string
	// ContextPath is the open API's path prefix (key
	// registry.nacos.context_path, default "/nacos").
	ContextPath string
	// Namespace is the namespace ID (key registry.nacos.namespace); ""
	// means the public namespace. Up to 128 letters, digits, '-', '_' and '.'.
	Namespace string
	// Group is the service's group (key registry.nacos.group, default
	// "DEFAULT_GROUP"). Up to 128 letters, digits, '-', '_', '.' and ':'.
	Group string
	// Username and Password are Nacos credentials (keys
	// registry.nacos.username and registry.nacos.password), both or neither. The password is never logged.
	Username, Password string
}

// Options configure a Registrar. Start from DefaultOptions; Validate (called
// by New) rejects out-of-range values with a *budget.RangeError naming
// the setting.
type Options struct {
	Server
	// Service is the service name (1 to 255 letters, digits, '-', '_', '.').
	Service string
	// Address is the IP consumers dial. Empty means this host's first
	// non-loopback IP address.
	Address string
	// Port is the port consumers dial (1 to 65535).
	Port int
	// Scheme names the primary endpoint's protocol (Address:Port), e.g.
	// "http"; Extra are the instance's other endpoints (an empty Address
	// meaning Address). SetEndpoints sets them from drainkit.Bound. With a
	// Scheme, the instance's metadata carries kind (the primary scheme, as
	// kratos's Nacos registry writes it and its discovery reads it) and
	// drainkit_endpoints (MetaEndpoints: every endpoint as
	// scheme://host:port, the primary first, comma-separated), which the
	// Source turns back into registry.Instance.Endpoints. Empty: no such
	// metadata, one address for every protocol.
	Scheme string
	Extra  []registry.Endpoint
	// Cluster is the instance's Nacos cluster (key registry.nacos.cluster,
	// default "DEFAULT"): up to 64 letters, digits and '-'.
	Cluster string
	// Weight is the instance's weight (key registry.nacos.weight, default 1): > 0 and
	// <= 10000, Nacos's own range.
	Weight float64
	// Meta is registered as the instance's metadata, with
	// registry.MetaReadyAt added; that key is reserved.
	Meta map[string]string

	// SyncInterval is how often the Registrar reads its instance back from
	// the server and repairs it (re-registers it if the server lost it,
	// notices an operator's offline): default 2s.
	SyncInterval time.Duration
	// CallTimeout bounds each call to the server (default 2s, <=
	// SyncInterval).
	CallTimeout time.Duration
	// CloseTimeout bounds Close, stopping the worker and closing the
	// client's connection (which removes its ephemeral instances on the
	// server) together: against a server that accepts and never answers
	// the SDK's calls take no context and can hang for minutes; they go on
	// in the background. Default 2s.
	CloseTimeout time.Duration
	// SettleTime is how long after its own write the Registrar trusts a
	// read of enabled=false to be an operator's rather than its own write
	// still on its way (default 1s).
	SettleTime time.Duration

	// OnOperator, if set, is called from the Registrar's goroutine with
	// true when it notices that an operator disabled the instance on the
	// server (the console's "offline"), and with false when the operator
	// enabled it again. A program wires it to its lifecycle's Eject and
	// Restore (cause operator); it must return quickly.
	OnOperator func(offline bool)
	// Logger receives registration events and failures; nil means
	// slog.Default().
	Logger *slog.Logger
	// SDKDir is the directory under which nacos-sdk-go's log and cache
	// files go (key registry.nacos.sdk_dir): one subdirectory per process,
	// marked as drainkit's by a file naming its pid, the log rotated at 10
	// MB with 2 old files, the client's cache (never read: drainkit reads
	// the server) removed once the client has closed, and a killed drainkit
	// process's subdirectory removed by the next process using the same
	// directory. Nothing else under it is ever removed, so it may be a
	// directory shared with other files. "" means DefaultSDKDir().
	SDKDir string
}

// Defaults.
const (
	DefaultContextPath  = "/nacos"
	DefaultGroup        = "DEFAULT_GROUP"
	DefaultCluster      = "DEFAULT"
	DefaultWeight       = 1.0
	MaxWeight           = 10000.0
	DefaultSyncInterval = 2 * time.Second
	DefaultCallTimeout  = 2 * time.Second
	DefaultCloseTimeout = 2 * time.Second
	DefaultSettleTime   = time.Second
)

// DefaultOptions returns Options for service on port in the public
// namespace, group DEFAULT_GROUP, cluster DEFAULT, weight 1. Addrs must still
// be set.
func DefaultOptions(service string, port int) Options {
	return Options{Service: service, Port: port,
		Server:  Server{ContextPath: DefaultContextPath, Group: DefaultGroup},
		Cluster: DefaultCluster, Weight: DefaultWeight}
}

func (o Options) withDefaults() Options {
	o.Server = o.Server.withDefaults()
	if o.Cluster == "" {
		o.Cluster = DefaultCluster
	}
	if o.SyncInterval == 0 {
		o.SyncInterval = DefaultSyncInterval
	}
	if o.CallTimeout == 0 {
		o.CallTimeout = min(DefaultCallTimeout, o.SyncInterval)
	}
	if o.CloseTimeout == 0 {
		o.CloseTimeout = DefaultCloseTimeout
	}
	if o.SettleTime == 0 {
		o.SettleTime = DefaultSettleTime
	}
	return o
}

func (s Server) withDefaults() Server {
	if s.ContextPath == "" {
		s.ContextPath = DefaultContextPath
	}
	if s.Group == "" {
		s.Group = DefaultGroup
	}
	return s
}

func re(key, value, allowed string) error {
	return &budget.RangeError{Key: key, Value: value, Allowed: allowed}
}

// Validate checks the server settings, naming the key of the first bad
// one.
func (s Server) Validate() error {
	s = s.withDefaults()
	if len(s.Addrs) == 0 {
		return re("registry.nacos.server_addr", `""`, "must list at least one Nacos server as host:port, e.g. 127.0.0.1:8848")
	}
	for _, a := range s.Addrs {
		if rule := config.NacosServerAddr(a); rule != "" {
			return re("registry.nacos.server_addr", strconv.Quote(strings.Join(s.Addrs, ",")), rule)
		}
	}
	switch {
	case !strings.HasPrefix(s.ContextPath, "/") || strings.ContainsAny(s.ContextPath, "?# "):
		return re("registry.nacos.context_path", strconv.Quote(s.ContextPath), "must be a URL path starting with '/', e.g. /nacos")
	case !config.NacosName(s.Namespace, 0, 128, "-_."):
		return re("registry.nacos.namespace", strconv.Quote(s.Namespace), "must be a namespace ID of up to 128 letters, digits, '-', '_' and '.' (empty: public)")
	case !config.NacosName(s.Group, 1, 128, "-_.:"):
		return re("registry.nacos.group", strconv.Quote(s.Group), "must be 1 to 128 letters, digits, '-', '_', '.' and ':'")
	case (s.Username == "") != (s.Password == ""):
		return re("registry.nacos.password", "[redacted]", "registry.nacos.username and registry.nacos.password must be set together")
	}
	return nil
}

// Validate returns a *budget.RangeError for the first setting out of
// range (after defaults for zero fields), or nil.
func (o Options) Validate() error {
	o = o.withDefaults()
	if err := o.Server.Validate(); err != nil {
		return err
	}
	d := func(v time.Duration) string { return v.String() }
	switch {
	case !registry.ValidServiceName(o.Service):
		return re("registry.service", strconv.Quote(o.Service), "must be 1 to 255 letters, digits, '-', '_' and '.'")
	case o.Port < 1 || o.Port > 65535:
		return re("registry.port", strconv.Itoa(o.Port), "must be between 1 and 65535")
	case !config.NacosName(o.Cluster, 1, 64, "-"):
		return re("registry.nacos.cluster", strconv.Quote(o.Cluster), "must be 1 to 64 letters, digits and '-'")
	case !(o.Weight > 0 && o.Weight <= MaxWeight):
		return re("registry.nacos.weight", strconv.FormatFloat(o.Weight, 'g', -1, 64), "must be > 0 and <= 10000")
	case o.Address != "" && net.ParseIP(o.Address) == nil:
		return re("registry.address", strconv.Quote(o.Address), "must be an IP address")
	case o.SyncInterval < 100*time.Millisecond || o.SyncInterval > time.Minute:
		return re("registry.nacos.sync_interval", d(o.SyncInterval), "must be >= 100ms and <= 1m")
	case o.CallTimeout <= 0 || o.CallTimeout > o.SyncInterval:
		return re("registry.nacos.call_timeout", d(o.CallTimeout), "must be > 0 and <= the sync interval ("+d(o.SyncInterval)+")")
	case o.CloseTimeout <= 0 || o.CloseTimeout > time.Minute:
		return re("registry.nacos.close_timeout", d(o.CloseTimeout), "must be > 0 and <= 1m")
	case o.SettleTime <= 0 || o.SettleTime > time.Minute:
		return re("registry.nacos.settle_time", d(o.SettleTime), "must be > 0 and <= 1m")
	}
	for _, k := range []string{registry.MetaReadyAt, MetaKind, MetaEndpoints} {
		if _, ok := o.Meta[k]; ok {
			return re("registry.meta", k, "meta key "+k+" is reserved by drainkit")
		}
	}
	if o.Scheme == "" && len(o.Extra) > 0 {
		return re("registry.endpoints", strconv.Itoa(len(o.Extra)), "extra endpoints need a Scheme for the primary one")
	}
	if o.Scheme != "" {
		if err := registry.CheckEndpoints(o.endpoints()); err != nil {
			return re("registry.endpoints", strconv.Quote(o.Scheme), err.Error())
		}
	}
	return nil
}

// Metadata keys of an instance with endpoints (see Options.Scheme).
const (
	// MetaKind is the primary endpoint's scheme, kratos's key.
	MetaKind = "kind"
	// MetaEndpoints lists every endpoint, scheme://host:port separated by
	// commas, the primary first.
	MetaEndpoints = "drainkit_endpoints"
)

// SetEndpoints makes eps the instance's endpoints: the first gives Scheme,
// Address (when not empty) and Port, the others Extra. eps is typically
// drainkit.Bound.Endpoints, every service listener of the process. An empty
// eps changes nothing.
func (o *Options) SetEndpoints(eps []registry.Endpoint) {
	if len(eps) > 0 {
		o.Scheme, o.Address, o.Port, o.Extra = eps[0].Scheme, cmp.Or(eps[0].Address, o.Address), eps[0].Port, eps[1:]
	}
}

// endpoints returns every endpoint registered, the primary first, with
// empty addresses filled with Address.
func (o Options) endpoints() []registry.Endpoint {
	return registry.RegisteredEndpoints(o.Scheme, o.Address, o.Port, o.Extra)
}

// endpointsMeta returns MetaEndpoints's value: every endpoint's URL.
func (o Options) endpointsMeta() string {
	var urls []string
	for _, e := range o.endpoints() {
		urls = append(urls, e.String())
	}
	return strings.Join(urls, ",")
}
