package nacos

import (
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/registry"
)

// Server says where a Nacos server (or cluster) is and how to reach it: what
// a Registrar and a Source share.
type Server struct {
	// Addrs are the servers' HTTP addresses, "host:port" (env
	// NACOS_SERVER_ADDR, comma-separated; at least one). Clients of Nacos
	// 2.x and 3.x reach the same server's gRPC port at port+1000.
	Addrs []string
	// ContextPath is the open API's path prefix (env NACOS_CONTEXT_PATH,
	// default "/nacos").
	ContextPath string
	// Namespace is the namespace ID (env NACOS_NAMESPACE); "" means the
	// public namespace. Up to 128 letters, digits, '-', '_' and '.'.
	Namespace string
	// Group is the service's group (env NACOS_GROUP, default
	// "DEFAULT_GROUP"). Up to 128 letters, digits, '-', '_', '.' and ':'.
	Group string
	// Username and Password are Nacos credentials (env NACOS_USERNAME,
	// NACOS_PASSWORD), both or neither. The password is never logged.
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
	// Cluster is the instance's Nacos cluster (env NACOS_CLUSTER, default
	// "DEFAULT"): up to 64 letters, digits and '-'.
	Cluster string
	// Weight is the instance's weight (env NACOS_WEIGHT, default 1): > 0 and
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
	// CloseTimeout bounds Close: closing the client's connection (which
	// removes its ephemeral instances on the server) can hang for minutes
	// when the server is unreachable. Default 2s.
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
	// SDKLogDir is where nacos-sdk-go writes its own log and cache files;
	// "" means a directory under os.TempDir() named after the process.
	SDKLogDir string
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

// Env names the environment variables OptionsFromEnv reads.
const (
	EnvServerAddr  = "NACOS_SERVER_ADDR"
	EnvContextPath = "NACOS_CONTEXT_PATH"
	EnvNamespace   = "NACOS_NAMESPACE"
	EnvGroup       = "NACOS_GROUP"
	EnvCluster     = "NACOS_CLUSTER"
	EnvWeight      = "NACOS_WEIGHT"
	EnvUsername    = "NACOS_USERNAME"
	EnvPassword    = "NACOS_PASSWORD"
)

// OptionsFromEnv returns Options for service on port from the NACOS_*
// environment variables (see Server and Options); enabled is false when
// NACOS_SERVER_ADDR is unset or empty (register nowhere). The error is a
// *budget.RangeError naming the variable, from a weight that does not
// parse or from Validate.
func OptionsFromEnv(service string, port int) (o Options, enabled bool, err error) {
	o = DefaultOptions(service, port)
	addrs := os.Getenv(EnvServerAddr)
	if strings.TrimSpace(addrs) == "" {
		return o, false, nil
	}
	o.Addrs = strings.Split(addrs, ",")
	for i := range o.Addrs {
		o.Addrs[i] = strings.TrimSpace(o.Addrs[i])
	}
	if v, ok := os.LookupEnv(EnvContextPath); ok {
		o.ContextPath = v
	}
	o.Namespace = os.Getenv(EnvNamespace)
	if v, ok := os.LookupEnv(EnvGroup); ok {
		o.Group = v
	}
	if v, ok := os.LookupEnv(EnvCluster); ok {
		o.Cluster = v
	}
	if v, ok := os.LookupEnv(EnvWeight); ok {
		w, perr := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if perr != nil {
			return o, true, &budget.RangeError{Key: EnvWeight, Value: strconv.Quote(v), Allowed: "must be a number > 0 and <= 10000"}
		}
		o.Weight = w
	}
	o.Username, o.Password = os.Getenv(EnvUsername), os.Getenv(EnvPassword)
	return o, true, o.Validate()
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

// Validate checks the server settings, naming the environment variable of
// the first bad one.
func (s Server) Validate() error {
	s = s.withDefaults()
	if len(s.Addrs) == 0 {
		return re(EnvServerAddr, `""`, "must list at least one Nacos server as host:port, e.g. 127.0.0.1:8848")
	}
	for _, a := range s.Addrs {
		host, port, err := net.SplitHostPort(a)
		p, perr := strconv.Atoi(port)
		if err != nil || host == "" || perr != nil || p < 1 || p+1000 > 65535 {
			return re(EnvServerAddr, strconv.Quote(strings.Join(s.Addrs, ",")),
				"each entry must be host:port with a port from 1 to 64535 (the gRPC port is port+1000), e.g. 127.0.0.1:8848")
		}
	}
	switch {
	case !strings.HasPrefix(s.ContextPath, "/") || strings.ContainsAny(s.ContextPath, "?# "):
		return re(EnvContextPath, strconv.Quote(s.ContextPath), "must be a URL path starting with '/', e.g. /nacos")
	case !validChars(s.Namespace, 0, 128, "-_."):
		return re(EnvNamespace, strconv.Quote(s.Namespace), "must be a namespace ID of up to 128 letters, digits, '-', '_' and '.' (empty: public)")
	case !validChars(s.Group, 1, 128, "-_.:"):
		return re(EnvGroup, strconv.Quote(s.Group), "must be 1 to 128 letters, digits, '-', '_', '.' and ':'")
	case (s.Username == "") != (s.Password == ""):
		return re(EnvUsername, strconv.Quote(s.Username), "NACOS_USERNAME and NACOS_PASSWORD must be set together")
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
	case !validChars(o.Cluster, 1, 64, "-"):
		return re(EnvCluster, strconv.Quote(o.Cluster), "must be 1 to 64 letters, digits and '-'")
	case !(o.Weight > 0 && o.Weight <= MaxWeight):
		return re(EnvWeight, strconv.FormatFloat(o.Weight, 'g', -1, 64), "must be > 0 and <= 10000")
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
	if _, ok := o.Meta[registry.MetaReadyAt]; ok {
		return re("registry.meta", registry.MetaReadyAt, "meta key "+registry.MetaReadyAt+" is reserved by drainkit")
	}
	return nil
}

// validChars reports whether s has min to max characters, each an ASCII
// letter, a digit or one of extra.
func validChars(s string, minLen, maxLen int, extra string) bool {
	if len(s) < minLen || len(s) > maxLen {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(extra, r)) {
			return false
		}
	}
	return true
}
