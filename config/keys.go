package config

import (
	"strconv"
	"strings"
	"time"
)

// kind is a key's value type.
type kind int

const (
	kindDuration kind = iota
	kindInt
	kindString
	kindSecret
	kindBool
	kindFloat
	kindMeta
)

// keyDef describes one configuration key.
type keyDef struct {
	name    string
	kind    kind
	help    string              // what the key means, one line
	allowed string              // the allowed range or form, in words
	field   func(c *Config) any // pointer to the field: *time.Duration, *int, *float64, *string, *Secret, *bool or *map[string]string
}

// keys lists every key in the order of the sample file, of String and of
// validation.
var keys = []keyDef{
	{"warmup.timeout", kindDuration, "warm-up hooks must finish within this, else exit 1",
		"> 0s, <= 24h", func(c *Config) any { return &c.Timings.WarmupTimeout }},
	{"propagation.min", kindDuration, "after going not-ready and deregistering, keep serving at least this long (left unset, a confirmed deregistration and every caller moved end the window before it)",
		">= 0s, <= propagation.max", func(c *Config) any { return &c.Timings.PropagationMin }},
	{"propagation.quiet", kindDuration, "after propagation.min, wait until no request has arrived for this long, and every caller has moved (no request for 3 of its usual gaps, at least quiet)",
		">= 0s, <= propagation.max", func(c *Config) any { return &c.Timings.PropagationQuiet }},
	{"propagation.max", kindDuration, "never keep the propagation window open longer than this (min, quiet and max all 0: no window)",
		">= propagation.min, >= propagation.quiet, <= 24h", func(c *Config) any { return &c.Timings.PropagationMax }},
	{"propagation.evidence_dir", kindString, "directory where the last drains' measured staleness per caller class is kept, and the window they ask for advised (log, /state); empty: none kept",
		"a directory path drainkit can create and write, or empty", func(c *Config) any { return &c.EvidenceDir }},
	{"drain.timeout", kindDuration, "after the listeners close, in-flight work gets this long; the rest is force-closed",
		"> 0s, <= 24h", func(c *Config) any { return &c.Timings.DrainTimeout }},
	{"stop.timeout", kindDuration, "stop hooks (flush telemetry, close pools) must finish within this",
		"> 0s, <= 24h", func(c *Config) any { return &c.Timings.StopTimeout }},
	{"grace_period", kindDuration, "the whole budget from the drain's start: the pod's terminationGracePeriodSeconds minus 5s of slack",
		">= propagation.max + drain.timeout + stop.timeout + margin (10% of grace_period, at least 1s), <= 24h",
		func(c *Config) any { return &c.Timings.GracePeriod }},
	{"checks.interval", kindDuration, "time between readiness-check rounds",
		"> 0s, <= 24h", func(c *Config) any { return &c.Checks.Interval }},
	{"checks.timeout", kindDuration, "a readiness check still running after this fails",
		"> 0s, <= checks.interval", func(c *Config) any { return &c.Checks.Timeout }},
	{"checks.failure_threshold", kindInt, "failed rounds in a row that move READY -> EJECTED",
		"1..1000", func(c *Config) any { return &c.Checks.FailureThreshold }},
	{"checks.success_threshold", kindInt, "passed rounds in a row that move a check-ejected instance back to READY",
		"> checks.failure_threshold, <= 1000", func(c *Config) any { return &c.Checks.SuccessThreshold }},
	{"admin.addr", kindString, "admin listener (probes, /state, /drain, /eject, /restore)",
		"host:port with a numeric port, e.g. :8081 or 127.0.0.1:8081", func(c *Config) any { return &c.Admin.Addr }},
	{"admin.token", kindSecret, "bearer token required for POST /drain, /eject, /restore from every peer; empty: loopback peers only",
		"empty, or printable ASCII without spaces or quotes", func(c *Config) any { return &c.Admin.Token }},
	{"admin.metrics", kindBool, "serve Prometheus metrics at GET /metrics on the admin listener",
		"true or false", func(c *Config) any { return &c.Admin.Metrics }},
	{"admin.servingz_draining", kindBool, "GET /servingz (the Kubernetes readinessProbe) passes during a drain the kubelet started until the listeners close, keeping a terminating pod serving for kube-proxy's fallback; false: fails from the drain's start like /readyz",
		"true or false", func(c *Config) any { return &c.Admin.ServingzDraining }},
	{"registry.service", kindString, "service name to register in Consul, etcd or Nacos; empty: the program's default",
		"letters, digits, '-', '_' and '.', at most 255 bytes", func(c *Config) any { return &c.Registry.Service }},
	{"registry.address", kindString, "address registered for consumers to dial (a pod IP from the downward API); empty: the listener's IP if it has one, else the registrar's default",
		"empty, an IP address or a DNS name", func(c *Config) any { return &c.Registry.Address }},
	{"registry.ttl", kindDuration, "time to live of the registry's TTL check",
		">= 1s, <= 24h", func(c *Config) any { return &c.Registry.TTL }},
	{"registry.heartbeat_interval", kindDuration, "how often the TTL check is refreshed",
		"0 (registry.ttl / 3), or > 0s and <= registry.ttl / 3", func(c *Config) any { return &c.Registry.HeartbeatInterval }},
	{"registry.deregister_critical_service_after", kindDuration, "Consul removes an instance whose check stayed critical this long (after kill -9)",
		">= 1m, <= 24h", func(c *Config) any { return &c.Registry.DeregisterCriticalServiceAfter }},
	{"registry.call_timeout", kindDuration, "timeout of each call to the Consul agent",
		"0 (the smaller of the heartbeat interval and 2s), or > 0s and <= the heartbeat interval", func(c *Config) any { return &c.Registry.CallTimeout }},
	{"registry.deregister_timeout", kindDuration, "deregistration at the drain's start must finish within this (also capped by propagation.max)",
		"> 0s, <= 24h", func(c *Config) any { return &c.Registry.DeregisterTimeout }},
	{"registry.meta", kindMeta, "metadata registered with the instance (Consul's service meta, the kratos metadata in etcd, Nacos's instance metadata), e.g. zone=eu-west-1a for zone-aware consumers; empty: none",
		metaAllowed, func(c *Config) any { return &c.Registry.Meta }},
}

// Keys returns every configuration key, in a stable order, e.g.
// "propagation.min".
func Keys() []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.name
	}
	return out
}

// KeysUnder returns the keys whose name starts with prefix, in the order of
// Keys: KeysUnder("registry.etcd.") lists etcd's settings.
func KeysUnder(prefix string) []string {
	var out []string
	for _, k := range keys {
		if strings.HasPrefix(k.name, prefix) {
			out = append(out, k.name)
		}
	}
	return out
}

// SharedRegistryKeys returns the registry.* keys every registrar reads:
// registry.service, registry.address, registry.deregister_timeout and
// registry.meta. A
// registrar's drainkit.Registration lists them with its own keys.
func SharedRegistryKeys() []string {
	return []string{"registry.service", "registry.address", "registry.deregister_timeout", "registry.meta"}
}

// EnvVar returns the environment variable for key: "DRAINKIT_" followed by the
// key upper-cased with '.' replaced by '_' (DRAINKIT_PROPAGATION_MIN).
func EnvVar(key string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// FlagName returns the flag for key, without dashes: the key with '.' and '_'
// replaced by '-' ("propagation-min").
func FlagName(key string) string {
	return strings.NewReplacer(".", "-", "_", "-").Replace(key)
}

const envPrefix = "DRAINKIT_"

func lookupKey(name string) (keyDef, bool) {
	for _, k := range keys {
		if k.name == name {
			return k, true
		}
	}
	return keyDef{}, false
}

// format renders the key's current value in c as a file or flag would spell
// it; the token is redacted.
func (k keyDef) format(c *Config) string {
	switch p := k.field(c).(type) {
	case *time.Duration:
		return formatDuration(*p)
	case *int:
		return strconv.Itoa(*p)
	case *float64:
		return strconv.FormatFloat(*p, 'g', -1, 64)
	case *string:
		return *p
	case *Secret:
		return p.redact()
	case *bool:
		return strconv.FormatBool(*p)
	case *map[string]string:
		return formatMeta(*p)
	}
	return ""
}

// formatDuration is time.Duration.String without trailing zero units:
// "1m" rather than "1m0s", "1h" rather than "1h0m0s".
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
