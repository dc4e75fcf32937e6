package config

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
)

// Config is a complete, validated set of drainkit settings. Load returns one;
// Default returns the defaults. A Config built or changed in code should be
// checked with Validate before use.
type Config struct {
	// Timings is the drain budget (keys warmup.timeout, propagation.min,
	// propagation.quiet, propagation.max, drain.timeout, stop.timeout,
	// grace_period). Default budget.DefaultTimings().
	Timings budget.Timings
	// Checks sets the readiness-check interval, timeout and thresholds (keys
	// checks.*). Default budget.DefaultCheckOptions().
	Checks budget.CheckOptions
	// EvidenceDir is where the lifecycle keeps the last drains' measured
	// staleness per caller class and from which it advises the window (key
	// propagation.evidence_dir; lifecycle.Options.EvidenceDir). Default
	// empty: none kept.
	EvidenceDir string
	// Admin is the admin listener (probes, GET /state, POST /drain).
	Admin AdminConfig
	// Registry holds the service-registry (Consul) settings.
	Registry RegistryConfig

	// sources records where each key's value came from (absent: default).
	sources map[string]Source
	// warnings are the environment's unknown DRAINKIT_* variables (Warnings).
	warnings []Warning
}

// AdminConfig configures the admin listener of DESIGN.md section 2.
type AdminConfig struct {
	// Addr is the admin listener's address, host:port (key admin.addr,
	// default ":8081"; port 0 picks a free port).
	Addr string
	// Token, when set, is the bearer token POST /drain, /eject and /restore
	// require from every peer; empty means those endpoints accept loopback
	// peers only (key admin.token, default empty). It is a Secret: it never
	// prints.
	Token Secret
	// Metrics mounts the Prometheus endpoint GET /metrics on the admin
	// listener (key admin.metrics, default false).
	Metrics bool
	// ServingzDraining keeps GET /servingz, the Kubernetes readiness probe,
	// passing during a drain the kubelet started until the listeners close
	// (key admin.servingz_draining, default true); false fails it from the
	// drain's start like /readyz. See probes.Options.ServingzFailsDraining
	// and DESIGN.md section 2.
	ServingzDraining bool
}

// RegistryConfig holds the registry-neutral registration settings (DESIGN.md
// section 6) as plain values: config imports no registry client, so a
// service that registers nowhere does not link one. The registry package
// converts them (registry/consul.OptionsFrom). The Consul agent's address and
// ACL token are not here: consul/api reads them from CONSUL_HTTP_ADDR,
// CONSUL_HTTP_TOKEN and friends.
type RegistryConfig struct {
	// Service is the service name to register (key registry.service; default
	// empty, meaning the program's own default). Letters, digits, '-', '_'
	// and '.', at most 255 bytes.
	Service string
	// Address is the address registered for consumers to dial (key
	// registry.address, default empty: the listener's IP when it is bound
	// to one, else the registrar's own default, see registry/consul and
	// registry/etcd). On Kubernetes, the pod IP from the downward API
	// (DRAINKIT_REGISTRY_ADDRESS from status.podIP). An IP address or a DNS
	// name.
	Address string
	// TTL is the TTL check's time to live (key registry.ttl, default 10s,
	// 1s..24h).
	TTL time.Duration
	// HeartbeatInterval is how often the TTL check is refreshed (key
	// registry.heartbeat_interval, default 0 meaning registry.ttl / 3;
	// otherwise > 0 and <= registry.ttl / 3).
	HeartbeatInterval time.Duration
	// DeregisterCriticalServiceAfter lets Consul remove an instance whose
	// check stayed critical this long, e.g. after kill -9 (key
	// registry.deregister_critical_service_after, default 1m, 1m..24h).
	DeregisterCriticalServiceAfter time.Duration
	// CallTimeout bounds each call to the Consul agent (key
	// registry.call_timeout, default 0 meaning the smaller of the heartbeat
	// interval and 2s; otherwise > 0 and <= the heartbeat interval).
	CallTimeout time.Duration
	// DeregisterTimeout bounds deregistration at the drain's start (key
	// registry.deregister_timeout, default 5s, > 0 and <= 24h); the lifecycle
	// also caps it at propagation.max when that is > 0.
	DeregisterTimeout time.Duration
	// Meta is the metadata registered with the instance (key registry.meta,
	// default empty): Consul's service meta, the metadata of kratos's
	// instance JSON in etcd, Nacos's instance metadata; every registrar
	// registers it beside the keys it writes itself, and every registry
	// Source delivers it in registry.Instance.Meta. consumer.Zones reads an
	// instance's zone from its key "zone". In the environment and on the
	// command line it is key=value pairs separated by commas
	// (DRAINKIT_REGISTRY_META=zone=eu-west-1a,track=stable; a repeated
	// --registry-meta adds its pairs); in the file,
	// a table of strings or the same text. The rules (metaAllowed) are the
	// strictest of the registries', and the keys drainkit writes are
	// refused. nil when none is set.
	Meta map[string]string
	// Etcd configures registration in etcd (keys registry.etcd.*, see EtcdConfig).
	Etcd EtcdConfig
	// Nacos configures registration in Nacos (keys registry.nacos.*, see NacosConfig).
	Nacos NacosConfig
}

// Default returns the defaults of every key: DESIGN.md section 3's timings,
// budget.DefaultCheckOptions, admin listener ":8081" without token or
// metrics, and the registry defaults documented on RegistryConfig.
func Default() *Config {
	return &Config{
		Timings: budget.DefaultTimings(),
		Checks:  budget.DefaultCheckOptions(),
		Admin:   AdminConfig{Addr: ":8081", ServingzDraining: true},
		Registry: RegistryConfig{
			TTL:                            10 * time.Second,
			DeregisterCriticalServiceAfter: time.Minute,
			DeregisterTimeout:              5 * time.Second,
			Etcd:                           defaultEtcd(),
			Nacos:                          defaultNacos(),
		},
	}
}

// LifecycleOptions returns the lifecycle.Options of c's timings, check
// options and deregistration timeout, with MinIsDefault when no source set
// propagation.min (then a confirmed deregistration and the evidence that
// every caller has moved end the window before it); the caller sets its own logger,
// observers and signals on it before passing it to lifecycle.New.
func (c *Config) LifecycleOptions() lifecycle.Options {
	return lifecycle.Options{Timings: c.Timings, Checks: c.Checks, DeregisterTimeout: c.Registry.DeregisterTimeout,
		MinIsDefault: c.Source("propagation.min").Kind == FromDefault, EvidenceDir: c.EvidenceDir}
}

// Source reports where key's value came from: a flag, an environment
// variable, the file, or (for keys nobody set, unknown keys, or a Config not
// produced by Load) the default.
func (c *Config) Source(key string) Source {
	if s, ok := c.sources[key]; ok {
		return s
	}
	return Source{Kind: FromDefault}
}

// String renders every key as key=value on one line, in the order of Keys;
// the admin token shows as [set] or [unset], never its value.
func (c *Config) String() string {
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k.name)
		b.WriteByte('=')
		b.WriteString(k.format(c))
	}
	return b.String()
}

// LogValue renders c as a slog group of key=value pairs, with the admin token
// redacted like String.
func (c *Config) LogValue() slog.Value {
	attrs := make([]slog.Attr, 0, len(keys))
	for _, k := range keys {
		attrs = append(attrs, slog.String(k.name, k.format(c)))
	}
	return slog.GroupValue(attrs...)
}

// Secret is a string that never prints: String, GoString, Format, LogValue,
// MarshalText and MarshalJSON all show "[set]" or "[unset]". Convert it with
// string(s) where the value is really needed (comparing a bearer token).
type Secret string

const redacted = "[set]"

func (s Secret) redact() string {
	if s == "" {
		return "[unset]"
	}
	return redacted
}

// String returns "[set]" or "[unset]".
func (s Secret) String() string { return s.redact() }

// GoString returns "[set]" or "[unset]", so %#v does not leak either.
func (s Secret) GoString() string { return s.redact() }

// Format prints "[set]" or "[unset]" for every verb.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.redact())) }

// LogValue returns "[set]" or "[unset]".
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.redact()) }

// MarshalText returns "[set]" or "[unset]".
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.redact()), nil }
