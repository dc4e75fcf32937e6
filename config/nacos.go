package config

import (
	"net"
	"strconv"
	"strings"
	"time"
)

// NacosConfig configures registration in Nacos (keys registry.nacos.*; the
// service name is registry.service). It holds plain settings only:
// registry/nacos.OptionsFrom turns them into its Options, so that config
// does not import nacos-sdk-go. Programs also take the server addresses from
// NACOS_SERVER_ADDR when registry.nacos.server_addr is empty.
type NacosConfig struct {
	// ServerAddr lists the servers' HTTP addresses, comma-separated
	// host:port (key registry.nacos.server_addr, default empty: no Nacos
	// registration), e.g. "10.0.0.1:8848,10.0.0.2:8848". Clients of Nacos
	// 2.x and 3.x reach each server's gRPC port at port+1000, so a port is
	// 1 to 64535.
	ServerAddr string
	// ContextPath is the open API's path prefix (key
	// registry.nacos.context_path, default "/nacos").
	ContextPath string
	// Namespace is the namespace ID (key registry.nacos.namespace, default
	// empty: the public namespace); up to 128 letters, digits, '-', '_' and
	// '.'.
	Namespace string
	// Group is the service's group (key registry.nacos.group, default
	// "DEFAULT_GROUP"); 1 to 128 letters, digits, '-', '_', '.' and ':'.
	Group string
	// Cluster is the instance's cluster (key registry.nacos.cluster, default
	// "DEFAULT"); 1 to 64 letters, digits and '-'.
	Cluster string
	// Weight is the instance's weight (key registry.nacos.weight, default 1;
	// > 0 and <= 10000, Nacos's own range).
	Weight float64
	// Username and Password are Nacos credentials (keys
	// registry.nacos.username, registry.nacos.password; both or neither).
	// Password is a Secret: it never prints.
	Username string
	Password Secret
	// SyncInterval is how often the registrar reads its instance back from
	// the server and repairs it (key registry.nacos.sync_interval, default
	// 2s; >= 100ms and <= 1m).
	SyncInterval time.Duration
	// CallTimeout bounds each call to the server (key
	// registry.nacos.call_timeout, default 0 meaning the smaller of the sync
	// interval and 2s; otherwise > 0 and <= the sync interval).
	CallTimeout time.Duration
	// CloseTimeout bounds closing the client's connection after the drain
	// (key registry.nacos.close_timeout, default 2s; > 0 and <= 1m).
	CloseTimeout time.Duration
	// SDKDir is the directory under which nacos-sdk-go's log and cache files
	// go, one subdirectory per process marked as drainkit's (the only ones
	// drainkit ever removes: it may hold other files) (key
	// registry.nacos.sdk_dir, default empty: the user's cache directory,
	// e.g. ~/.cache/drainkit/nacos, else the temporary directory).
	SDKDir string
}

// ServerAddrList returns ServerAddr split at commas, each trimmed, empty
// items dropped.
func (n NacosConfig) ServerAddrList() []string { return commaList(n.ServerAddr) }

func defaultNacos() NacosConfig {
	return NacosConfig{ContextPath: "/nacos", Group: "DEFAULT_GROUP", Cluster: "DEFAULT", Weight: 1,
		SyncInterval: 2 * time.Second, CloseTimeout: 2 * time.Second}
}

// The registry.nacos.* keys follow the other keys (in Keys, the sample file,
// String and validation).
func init() { keys = append(keys, nacosKeys...) }

// nacosKeys are the registry.nacos.* keys: name, kind, help, allowed range
// and the field each fills.
var nacosKeys = []keyDef{
	{"registry.nacos.server_addr", kindString, "Nacos servers' HTTP addresses, comma-separated (gRPC on port+1000); empty: no Nacos registration (programs read NACOS_SERVER_ADDR)",
		"host:port items separated by commas, each port 1..64535, e.g. 127.0.0.1:8848 or [::1]:8848 (no IPv6 zone)", func(c *Config) any { return &c.Registry.Nacos.ServerAddr }},
	{"registry.nacos.context_path", kindString, "path prefix of the servers' open API",
		"a URL path starting with '/', e.g. /nacos", func(c *Config) any { return &c.Registry.Nacos.ContextPath }},
	{"registry.nacos.namespace", kindString, "namespace ID; empty: the public namespace",
		"up to 128 letters, digits, '-', '_' and '.'", func(c *Config) any { return &c.Registry.Nacos.Namespace }},
	{"registry.nacos.group", kindString, "the service's group",
		"1 to 128 letters, digits, '-', '_', '.' and ':'", func(c *Config) any { return &c.Registry.Nacos.Group }},
	{"registry.nacos.cluster", kindString, "the instance's cluster",
		"1 to 64 letters, digits and '-'", func(c *Config) any { return &c.Registry.Nacos.Cluster }},
	{"registry.nacos.weight", kindFloat, "the instance's weight (consumers send it a share of requests in proportion)",
		"> 0, <= 10000", func(c *Config) any { return &c.Registry.Nacos.Weight }},
	{"registry.nacos.username", kindString, "Nacos user name; empty: no authentication",
		"any text without spaces, set together with registry.nacos.password", func(c *Config) any { return &c.Registry.Nacos.Username }},
	{"registry.nacos.password", kindSecret, "Nacos password (never printed)",
		"any text without spaces, set together with registry.nacos.username", func(c *Config) any { return &c.Registry.Nacos.Password }},
	{"registry.nacos.sync_interval", kindDuration, "how often the registrar reads its instance back from the server and repairs it",
		">= 100ms, <= 1m", func(c *Config) any { return &c.Registry.Nacos.SyncInterval }},
	{"registry.nacos.call_timeout", kindDuration, "timeout of each call to the Nacos server",
		"0 (the smaller of registry.nacos.sync_interval and 2s), or > 0s and <= registry.nacos.sync_interval",
		func(c *Config) any { return &c.Registry.Nacos.CallTimeout }},
	{"registry.nacos.close_timeout", kindDuration, "closing the client's connection after the drain must finish within this",
		"> 0s, <= 1m", func(c *Config) any { return &c.Registry.Nacos.CloseTimeout }},
	{"registry.nacos.sdk_dir", kindString, "directory for nacos-sdk-go's log and cache files (one subdirectory per process, marked as drainkit's; only those are ever removed); empty: the user's cache directory",
		"a directory path, or empty", func(c *Config) any { return &c.Registry.Nacos.SDKDir }},
}

// checkNacos checks one registry.nacos.* key and returns the rule broken,
// or "". ServerAddr may be empty here (no Nacos registration).
func (c *Config) checkNacos(k keyDef) string {
	n := c.Registry.Nacos
	switch k.name {
	case "registry.nacos.server_addr":
		for _, a := range n.ServerAddrList() {
			if rule := NacosServerAddr(a); rule != "" {
				return rule
			}
		}
	case "registry.nacos.context_path":
		if !strings.HasPrefix(n.ContextPath, "/") || strings.ContainsAny(n.ContextPath, "?# ") {
			return "must be a URL path starting with '/', e.g. /nacos"
		}
	case "registry.nacos.namespace":
		if !NacosName(n.Namespace, 0, 128, "-_.") {
			return "must be up to 128 letters, digits, '-', '_' and '.' (empty: the public namespace)"
		}
	case "registry.nacos.group":
		if !NacosName(n.Group, 1, 128, "-_.:") {
			return "must be 1 to 128 letters, digits, '-', '_', '.' and ':'"
		}
	case "registry.nacos.cluster":
		if !NacosName(n.Cluster, 1, 64, "-") {
			return "must be 1 to 64 letters, digits and '-'"
		}
	case "registry.nacos.weight":
		if !(n.Weight > 0 && n.Weight <= 10000) {
			return "must be > 0 and <= 10000"
		}
	case "registry.nacos.username":
		if strings.ContainsAny(n.Username, " \t\r\n") {
			return "must not contain spaces"
		}
	case "registry.nacos.password":
		if strings.ContainsAny(string(n.Password), " \t\r\n") {
			return "must not contain spaces"
		}
		if (n.Username == "") != (n.Password == "") {
			return "must be set together with registry.nacos.username"
		}
	case "registry.nacos.sync_interval":
		if n.SyncInterval < 100*time.Millisecond || n.SyncInterval > time.Minute {
			return "must be >= 100ms and <= 1m"
		}
	case "registry.nacos.call_timeout":
		if n.CallTimeout < 0 || n.CallTimeout > n.SyncInterval {
			return "must be 0 (the smaller of the sync interval and 2s) or > 0s and <= registry.nacos.sync_interval (" + formatDuration(n.SyncInterval) + ")"
		}
	case "registry.nacos.close_timeout":
		if n.CloseTimeout <= 0 || n.CloseTimeout > time.Minute {
			return "must be > 0s and <= 1m"
		}
	}
	return ""
}

// NacosServerAddr checks one item of registry.nacos.server_addr and returns
// the rule it breaks, or "": host:port with a port from 1 to 64535 (the
// gRPC port is port+1000); an IPv6 address in brackets, e.g. [::1]:8848,
// without a zone (nacos-sdk-go writes the address into URLs unescaped, so
// a zone's '%' would break them). registry/nacos applies the same rule to
// its Options.
func NacosServerAddr(a string) string {
	host, port, err := net.SplitHostPort(a)
	p, perr := strconv.Atoi(port)
	switch {
	case err != nil || host == "" || perr != nil || p < 1 || p > 65535-1000:
		return "each item must be host:port with a port from 1 to 64535 (the gRPC port is port+1000), e.g. 127.0.0.1:8848 or [::1]:8848"
	case strings.Contains(host, "%"):
		return "an IPv6 address must not carry a zone (" + strconv.Quote(a) + "): nacos-sdk-go cannot dial it"
	}
	return ""
}

// NacosName reports whether s is minLen to maxLen characters, each an ASCII
// letter, a digit or one of extra: Nacos's rule for namespace IDs, groups
// and clusters (registry/nacos applies the same rule to its Options).
func NacosName(s string, minLen, maxLen int, extra string) bool {
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
