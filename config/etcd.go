package config

import (
	"strings"
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"
)

// EtcdConfig configures registration in etcd (keys registry.etcd.*; the
// service name is registry.service). It holds plain settings only:
// registry/etcd.OptionsFrom turns them into the etcd client's own
// configuration (endpoints, dial timeout, TLS files, username and password),
// so that config does not import the etcd client. Examples also take the
// endpoints from ETCD_ENDPOINTS when registry.etcd.endpoints is empty.
type EtcdConfig struct {
	// Endpoints are the etcd client addresses, comma-separated (key
	// registry.etcd.endpoints, default empty: no etcd registration), e.g.
	// "10.0.0.1:2379,10.0.0.2:2379" or "https://etcd-0:2379".
	Endpoints string
	// Prefix is the key prefix, kratos's namespace (key registry.etcd.prefix,
	// default "/microservices"); an instance's key is
	// <prefix>/<service>/<instance id>.
	Prefix string
	// TTL is the lease's time to live (key registry.etcd.ttl, default 10s;
	// whole seconds, >= 2s, etcd's minimum lease TTL, and <= 24h).
	TTL time.Duration
	// KeepAliveInterval is the time between lease keep-alives (key
	// registry.etcd.keepalive_interval, default 0 meaning ttl/3; otherwise
	// > 0 and <= ttl/3).
	KeepAliveInterval time.Duration
	// CallTimeout bounds each call to etcd (key registry.etcd.call_timeout,
	// default 0 meaning the smaller of the keep-alive interval and 2s;
	// otherwise > 0 and <= the keep-alive interval).
	CallTimeout time.Duration
	// DialTimeout bounds establishing a connection (key
	// registry.etcd.dial_timeout, default 5s, > 0 and <= 24h).
	DialTimeout time.Duration
	// Username and Password authenticate to etcd (keys
	// registry.etcd.username, registry.etcd.password; default empty: no
	// authentication). Password is a Secret: it never prints.
	Username string
	Password Secret
	// CAFile, CertFile and KeyFile are PEM files for TLS (keys
	// registry.etcd.ca_file, registry.etcd.cert_file, registry.etcd.key_file;
	// default empty). Any of them set turns TLS on; CertFile and KeyFile go
	// together (client certificate authentication).
	CAFile, CertFile, KeyFile string
	// Version is the version registered with the instance, kratos's
	// ServiceInstance.Version, which kratos's version filters match (key
	// registry.etcd.version, default empty: the program's version, as its
	// --version prints it).
	Version string
}

// EndpointList returns Endpoints split at commas, each trimmed, empty items
// dropped.
func (e EtcdConfig) EndpointList() []string { return commaList(e.Endpoints) }

// commaList returns s split at commas, each item trimmed, empty ones
// dropped.
func commaList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func defaultEtcd() EtcdConfig {
	return EtcdConfig{Prefix: "/microservices", TTL: 10 * time.Second, DialTimeout: 5 * time.Second}
}

// The registry.etcd.* keys follow the other keys (in Keys, the sample file,
// String and validation).
func init() { keys = append(keys, etcdKeys...) }

// etcdKeys are the registry.etcd.* keys: name, kind, help, allowed range and
// the field each fills.
var etcdKeys = []keyDef{
	{"registry.etcd.endpoints", kindString, "etcd client addresses, comma-separated; empty: no etcd registration (examples read ETCD_ENDPOINTS)",
		"host:port or URL items separated by commas, e.g. 127.0.0.1:2379", func(c *Config) any { return &c.Registry.Etcd.Endpoints }},
	{"registry.etcd.prefix", kindString, "key prefix (kratos's namespace): keys are <prefix>/<service>/<instance id>",
		"starts with '/', does not end with '/'", func(c *Config) any { return &c.Registry.Etcd.Prefix }},
	{"registry.etcd.ttl", kindDuration, "time to live of the lease the instance's key is attached to (after kill -9 the key leaves within it)",
		"whole seconds, >= 2s (etcd's minimum lease TTL), <= 24h", func(c *Config) any { return &c.Registry.Etcd.TTL }},
	{"registry.etcd.keepalive_interval", kindDuration, "how often the lease is kept alive",
		"0 (registry.etcd.ttl / 3), or > 0s and <= registry.etcd.ttl / 3", func(c *Config) any { return &c.Registry.Etcd.KeepAliveInterval }},
	{"registry.etcd.call_timeout", kindDuration, "timeout of each call to etcd",
		"0 (the smaller of the keep-alive interval and 2s), or > 0s and <= the keep-alive interval",
		func(c *Config) any { return &c.Registry.Etcd.CallTimeout }},
	{"registry.etcd.dial_timeout", kindDuration, "timeout of establishing a connection to etcd",
		"> 0s, <= 24h", func(c *Config) any { return &c.Registry.Etcd.DialTimeout }},
	{"registry.etcd.username", kindString, "etcd user name; empty: no authentication",
		"any text", func(c *Config) any { return &c.Registry.Etcd.Username }},
	{"registry.etcd.password", kindSecret, "etcd password (never printed)",
		"any text without spaces", func(c *Config) any { return &c.Registry.Etcd.Password }},
	{"registry.etcd.ca_file", kindString, "PEM file of the CAs that sign etcd's server certificate; any TLS file set turns TLS on",
		"a readable file path, or empty", func(c *Config) any { return &c.Registry.Etcd.CAFile }},
	{"registry.etcd.cert_file", kindString, "PEM client certificate for etcd (with registry.etcd.key_file)",
		"a readable file path, or empty", func(c *Config) any { return &c.Registry.Etcd.CertFile }},
	{"registry.etcd.key_file", kindString, "PEM private key of registry.etcd.cert_file",
		"a readable file path, or empty", func(c *Config) any { return &c.Registry.Etcd.KeyFile }},
	{"registry.etcd.version", kindString, "version registered with the instance (kratos's ServiceInstance.Version, which its version filters match); empty: the program's version (--version)",
		"any text", func(c *Config) any { return &c.Registry.Etcd.Version }},
}

// checkEtcd checks one registry.etcd.* key and returns the rule broken, or
// "". Endpoints may be empty here (no etcd registration); the registrar
// rejects an empty list when it is used.
func (c *Config) checkEtcd(k keyDef) string {
	e := c.Registry.Etcd
	max := "<= " + formatDuration(budget.MaxDuration)
	ka := e.KeepAliveInterval
	if ka == 0 {
		ka = e.TTL / 3
	}
	switch k.name {
	case "registry.etcd.prefix":
		if !strings.HasPrefix(e.Prefix, "/") || strings.HasSuffix(e.Prefix, "/") {
			return "must start with '/' and not end with '/', e.g. /microservices"
		}
	case "registry.etcd.ttl":
		if e.TTL < 2*time.Second || e.TTL > budget.MaxDuration || e.TTL%time.Second != 0 {
			return "must be whole seconds, >= 2s (etcd's minimum lease TTL) and " + max
		}
	case "registry.etcd.keepalive_interval":
		if e.KeepAliveInterval < 0 || e.KeepAliveInterval > e.TTL/3 {
			return "must be 0 (registry.etcd.ttl / 3) or > 0s and <= registry.etcd.ttl / 3 (" + formatDuration(e.TTL/3) + ")"
		}
	case "registry.etcd.call_timeout":
		if e.CallTimeout < 0 || e.CallTimeout > ka {
			return "must be 0 (the smaller of the keep-alive interval and 2s) or > 0s and <= registry.etcd.keepalive_interval (" + formatDuration(ka) + ")"
		}
	case "registry.etcd.dial_timeout":
		if e.DialTimeout <= 0 || e.DialTimeout > budget.MaxDuration {
			return "must be > 0s and " + max
		}
	case "registry.etcd.password":
		if strings.ContainsAny(string(e.Password), " \t\r\n") {
			return "must not contain spaces"
		}
	case "registry.etcd.key_file":
		if (e.CertFile == "") != (e.KeyFile == "") {
			return "must be set together with registry.etcd.cert_file"
		}
	}
	return ""
}
