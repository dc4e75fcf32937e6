package drainkit

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/spf13/pflag"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/lifecycle"
)

// Option configures Main and Run.
type Option func(*service)

// ServerFunc builds a server participant on ln, the listener the entry point
// opened for it; grpcdrain.New fits:
//
//	func(lc *lifecycle.Lifecycle, ln net.Listener) (lifecycle.Server, error) {
//		return grpcdrain.New(lc, ln, register), nil
//	}
type ServerFunc func(lc *lifecycle.Lifecycle, ln net.Listener) (lifecycle.Server, error)

// Registration plugs a registrar in: the hook a registry plugin implements
// (registry/consul.Register and registry/etcd.Register return a
// WithRegistrar of one, so that a program wires a registrar from the loaded
// settings in one line). The root package imports no registry client.
//
// Keys lists the registry.* settings the registrar reads (config.Keys'
// names, e.g. "registry.etcd.endpoints"). Main defines the flags of a
// registry.* key, and accepts a value for it from the file or the
// environment, only when a wired Registration lists it: `--help` of a
// program that wires no registrar shows no registry flag, and a registry
// setting given to it (DRAINKIT_REGISTRY_ETCD_ENDPOINTS, say) makes Main
// exit 2 before any listener opens, naming the setting and its source,
// instead of doing nothing silently. A registrar added by a WithSetup
// function claims its keys' file and environment values; their flags were
// defined before it existed, so they have none.
//
// Check runs after the settings load and before any listener opens: it
// validates everything the registrar will need (its settings, its client's
// environment) and returns an error naming the setting and its source,
// which makes Main exit 2 with nothing started. Build runs once the
// listeners are bound, with their real addresses and the instance's
// endpoints (Bound: every service listener with its scheme, for one
// registration per instance), and returns the registrar; it returns nil,
// nil (or is nil) to register nowhere (e.g. when no agent is configured).
// A registrar that is
// an io.Closer is closed by a stop hook, after the drain deregistered it.
//
// Enabled, if set, reports before any listener opens whether Build will
// return a registrar with these settings. When one will (Enabled nil counts
// as yes), Main also checks the deregistration budget then
// (config.Config.CheckDeregisterBudget: with no propagation window,
// registry.deregister_timeout must fit grace_period) and exits 2 naming the
// key, rather than letting Run fail after the listeners opened. Set Enabled
// when Build may return nil, so that a service registering nowhere is not
// held to a budget it does not spend.
type Registration struct {
	Keys    []string
	Check   func(cfg *config.Config) error
	Build   func(cfg *config.Config, b Bound) (lifecycle.Registrar, error)
	Enabled func(cfg *config.Config) bool
}

// listenerSpec is one named service listener.
type listenerSpec struct {
	name   string
	addr   string // default; flag --<name>-addr overrides
	build  ServerFunc
	scheme string // its endpoint's scheme in Bound.Endpoints; "" for none
}

// WithHTTP serves h on the listener name (flag --<name>-addr, default addr),
// drained by httpdrain, in an *http.Server with ReadHeaderTimeout 10s and
// IdleTimeout 2m. Listener names are unique, made of letters, digits, '-'
// and '_', and not "admin"; another name makes Main exit 2. A nil h serves
// http.DefaultServeMux, as in net/http.
func WithHTTP(name, addr string, h http.Handler) Option {
	return WithHTTPServer(name, addr, &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute})
}

// WithHTTPServer is WithHTTP with the caller's *http.Server (its timeouts,
// TLSConfig, ConnContext, ...); see httpdrain.New for what it may not do.
// Its endpoint is registered with scheme "http", or "https" when
// srv.TLSConfig is set.
func WithHTTPServer(name, addr string, srv *http.Server) Option {
	scheme := "http"
	if srv.TLSConfig != nil {
		scheme = "https"
	}
	return func(s *service) {
		s.listeners = append(s.listeners, listenerSpec{name, addr, s.httpServer(srv), scheme})
	}
}

// WithServer adds a listener name (flag --<name>-addr, default addr) and the
// server participant build makes on it: a gRPC server through grpcdrain, or
// any lifecycle.Server. Its endpoint is registered with scheme "grpc";
// WithEndpointScheme changes that.
func WithServer(name, addr string, build ServerFunc) Option {
	return func(s *service) { s.listeners = append(s.listeners, listenerSpec{name, addr, build, "grpc"}) }
}

// WithWorker adds a participant with no listener under name, in logs and GET
// /state: background work drained by workdrain (a queue consumer, a ticker),
// or any lifecycle.Server that opens no port.
func WithWorker(name string, w lifecycle.Server) Option {
	return func(s *service) {
		s.lcSetup = append(s.lcSetup, func(lc *lifecycle.Lifecycle) { lc.AddServer(name, w) })
	}
}

// WithRegistrar adds a registrar (Consul, etcd) under name; see Registration.
func WithRegistrar(name string, r Registration) Option {
	return func(s *service) { s.registrations = append(s.registrations, namedRegistration{name, r}) }
}

// OnWarmup adds a warm-up hook (lifecycle.Lifecycle.OnWarmup): readiness
// fails until every hook returned nil; an error, or the hooks together
// taking longer than warmup.timeout, exits 1.
func OnWarmup(name string, fn func(ctx context.Context) error) Option {
	return func(s *service) {
		s.lcSetup = append(s.lcSetup, func(lc *lifecycle.Lifecycle) { lc.OnWarmup(name, fn) })
	}
}

// OnStop adds a stop hook (lifecycle.Lifecycle.OnStop), the one hook at the
// end of the instance's life: stop hooks run after in-flight work ended, in
// reverse order, together within stop.timeout, inside the grace period; an
// error is logged and does not change the exit code. Close pools and
// flush what must leave the process here.
func OnStop(name string, fn func(ctx context.Context) error) Option {
	return func(s *service) { s.lcSetup = append(s.lcSetup, func(lc *lifecycle.Lifecycle) { lc.OnStop(name, fn) }) }
}

// WithCheck adds a readiness check named name (lifecycle.Lifecycle.AddCheck):
// fn runs in the background every checks.interval, within checks.timeout.
func WithCheck(name string, fn func(ctx context.Context) error) Option {
	return func(s *service) {
		s.lcSetup = append(s.lcSetup, func(lc *lifecycle.Lifecycle) { lc.AddCheck(name, fn) })
	}
}

// WithObserver adds a lifecycle observer (lifecycle.Options.Observers). A
// telemetry.Telemetry is one, and this is its whole wiring: it flushes
// itself as the last stop hook, within stop.timeout.
func WithObserver(obs lifecycle.Observer) Option {
	return func(s *service) { s.observers = append(s.observers, obs) }
}

// WithLifecycle calls fn with the lifecycle after every other option has
// been applied and before Run: the escape hatch to the low-level API.
func WithLifecycle(fn func(lc *lifecycle.Lifecycle) error) Option {
	return func(s *service) { s.lcHooks = append(s.lcHooks, fn) }
}

// WithAdminHandler mounts h at pattern (http.ServeMux syntax) on the admin
// listener, next to the probes. A telemetry-using service mounts its
// Prometheus handler at "/metrics" (which admin.metrics requires). A pattern
// that is invalid, conflicts with another one or would take over an
// endpoint of the probes (any of probes.Routes: the probes, /servingz among
// them, GET /state and the operator actions) makes Main exit 2 before any
// listener opens, with an error naming the pattern and the endpoint.
func WithAdminHandler(pattern string, h http.Handler) Option {
	return func(s *service) { s.adminHandlers = append(s.adminHandlers, adminHandler{pattern, h}) }
}

// WithSetup runs fn once the settings are loaded and before anything starts;
// fn returns further options built from them (a telemetry provider wired
// once, a registrar, an admin handler). An error exits 2.
func WithSetup(fn func(cfg *config.Config) ([]Option, error)) Option {
	return func(s *service) { s.setups = append(s.setups, fn) }
}

// WithLogger sets the logger (default JSON lines on the output, see
// WithOutput).
func WithLogger(l *slog.Logger) Option { return func(s *service) { s.logger = l } }

// WithOutput sets where all output goes: errors, warnings and (with the
// default logger) logs, by default on os.Stderr, and what --help and
// --version print, by default on os.Stdout (as a command's answer to a
// question, with exit 0).
func WithOutput(w io.Writer) Option { return func(s *service) { s.out, s.stdout = w, w } }

// WithEnv replaces the environment settings are read from ("KEY=value"
// strings; default os.Environ()).
func WithEnv(env []string) Option { return func(s *service) { s.env = env } }

// WithName sets the program name in usage and errors (default the
// executable's base name).
func WithName(name string) Option { return func(s *service) { s.name = name } }

// WithAdminLimits replaces the admin listener's limits (default
// DefaultAdminLimits()). It replaces all of them: a zero field means no limit,
// so start from DefaultAdminLimits() and change what differs.
func WithAdminLimits(l AdminLimits) Option { return func(s *service) { s.adminLimits = l } }

// OnStarted calls fn with every listener's bound address by name ("admin"
// and one per WithHTTP/WithServer), when the start line is logged: inside
// Run, after signals are handled, before the other warm-up hooks. fn must
// return promptly.
func OnStarted(fn func(addrs map[string]net.Addr)) Option {
	return func(s *service) { s.onStarted = append(s.onStarted, fn) }
}

// WithFlags lets the program define flags of its own on the entry point's
// flag set before it is parsed; read their values in WithSetup or later. A
// flag the entry point defines too (--version, --config, --<name>-addr, one
// per setting) makes Main exit 2, naming it.
func WithFlags(define func(fs *pflag.FlagSet)) Option {
	return func(s *service) { s.defineFlags = append(s.defineFlags, define) }
}

// WithDefaultAdminAddr replaces the admin listener's default address (":8081")
// when no flag, variable or file sets admin.addr, e.g. "127.0.0.1:8081" for a
// program that should expose nothing by default.
func WithDefaultAdminAddr(addr string) Option { return func(s *service) { s.defaultAdmin = addr } }
