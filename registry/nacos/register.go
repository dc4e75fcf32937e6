package nacos

import (
	"errors"
	"maps"
	"os"
	"strings"
	"sync/atomic"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/registry"
)

// EnvServerAddr is the variable naming the Nacos servers when
// registry.nacos.server_addr is empty, as Nacos's own clients and tools
// read it (comma-separated host:port).
const EnvServerAddr = "NACOS_SERVER_ADDR"

// Keys returns the settings Register reads: the shared registry keys
// (config.SharedRegistryKeys) and registry.nacos.*. drainkit.Main defines
// their flags, and accepts them from the file and the environment, only in
// a program that wires Register.
func Keys() []string {
	return append(config.SharedRegistryKeys(), config.KeysUnder("registry.nacos.")...)
}

// OptionsFrom returns Options for an instance serving on port from the
// registry settings of a config.Config: registry.service (defaultService
// when empty), registry.address (Address; empty keeps the default),
// registry.meta (a copy in Meta, the instance's metadata, which the caller
// may add to) and registry.nacos.* (server_addr, context_path, namespace,
// group, cluster, weight, username, password, sync_interval, call_timeout,
// close_timeout, sdk_dir). The caller sets what config does not cover (OnOperator,
// Logger, the endpoints). The error is Options.Validate's, naming the key.
func OptionsFrom(reg config.RegistryConfig, defaultService string, port int) (Options, error) {
	service := reg.Service
	if service == "" {
		service = defaultService
	}
	n := reg.Nacos
	o := DefaultOptions(service, port)
	o.Address = reg.Address
	o.Meta = maps.Clone(reg.Meta)
	o.Addrs = n.ServerAddrList()
	o.ContextPath, o.Namespace, o.Group = n.ContextPath, n.Namespace, n.Group
	o.Username, o.Password = n.Username, string(n.Password)
	o.Cluster, o.Weight = n.Cluster, n.Weight
	o.SyncInterval, o.CallTimeout, o.CloseTimeout = n.SyncInterval, n.CallTimeout, n.CloseTimeout
	o.SDKDir = n.SDKDir
	return o, o.Validate()
}

// Register wires Nacos registration into drainkit.Main from the loaded
// settings, in one line:
//
//	os.Exit(drainkit.Main(drainkit.WithHTTP("http", ":8080", mux), nacos.Register("orders")))
//
// It is Registration(service, hook) under the name "nacos", with a hook
// that moves the program's lifecycle on an operator's offline: EJECTED by
// operator (readiness fails, GET /state says cause operator) when the
// registrar notices the instance disabled on the server (the console's
// offline), READY again when an operator enables it. Noticing it needs the
// admin API, which Nacos 3 by default opens to admins only:
// registry.nacos.username and registry.nacos.password name one; without
// them the registrar says once in the log that an operator's offline
// cannot be observed, and registers all the same. A program that wants its
// own reaction wires Registration with its hook instead.
func Register(service string) drainkit.Option {
	var lc atomic.Pointer[lifecycle.Lifecycle]
	return both(drainkit.WithRegistrar("nacos", Registration(service, operatorHook(lc.Load))),
		drainkit.WithLifecycle(func(l *lifecycle.Lifecycle) error { lc.Store(l); return nil }))
}

// operatorHook returns an Options.OnOperator that ejects the lifecycle
// lc returns (cause operator) on an operator's offline and restores it on
// the operator's online; nil from lc (not built yet) does nothing. Restore
// fails, leaving the state alone, when the readiness checks ejected the
// instance meanwhile: their success threshold restores it.
func operatorHook(lc func() *lifecycle.Lifecycle) func(offline bool) {
	return func(offline bool) {
		l := lc()
		if l == nil {
			return
		}
		if offline {
			_ = l.Eject("nacos: an operator disabled the instance on the server (offline)")
		} else {
			_ = l.Restore("nacos: an operator enabled the instance on the server again")
		}
	}
}

// both returns an option that applies a, then b. (drainkit.Option's
// argument is unexported: the type parameters name it.)
func both[S any, O ~func(S)](a, b O) O {
	return func(s S) { a(s); b(s) }
}

// Registration returns the drainkit.Registration of an instance of service
// (registry.service overrides it) in Nacos: one ephemeral instance holding
// every endpoint the program serves (drainkit.Bound.Endpoints, see
// Options.SetEndpoints), at registry.address when it is set, else at the
// primary listener's IP when it is bound to one, else at this host's first
// non-loopback address. onOperator, if not nil, becomes
// Options.OnOperator (the program ejects its lifecycle with cause operator
// on true and restores it on false).
//
// It registers when registry.nacos.server_addr, or when that is empty the
// NACOS_SERVER_ADDR variable, names servers; with neither it registers
// nowhere. Every registry.nacos.* value is checked, and the SDK directory
// created, before any listener opens (exit 2 naming the key); an
// unreachable server does not stop the start (the registrar retries). The
// registrar logs through the program's logger and is closed after the
// drain.
func Registration(service string, onOperator func(offline bool)) drainkit.Registration {
	options := func(cfg *config.Config) (Options, bool, error) {
		reg := cfg.Registry
		fromEnv := strings.TrimSpace(reg.Nacos.ServerAddr) == ""
		if fromEnv {
			reg.Nacos.ServerAddr = os.Getenv(EnvServerAddr)
		}
		if len(reg.Nacos.ServerAddrList()) == 0 {
			return Options{}, false, nil
		}
		o, err := OptionsFrom(reg, service, 1)
		if re := (*budget.RangeError)(nil); fromEnv && errors.As(err, &re) && re.Key == "registry.nacos.server_addr" {
			re.Key = EnvServerAddr + " (registry.nacos.server_addr is empty)"
		}
		return o, true, err
	}
	return drainkit.Registration{
		Keys:    Keys(),
		Enabled: func(cfg *config.Config) bool { _, enabled, _ := options(cfg); return enabled },
		Check: func(cfg *config.Config) error {
			o, enabled, err := options(cfg)
			if !enabled || err != nil {
				return err
			}
			return CheckSDKDir(o.SDKDir)
		},
		Build: func(cfg *config.Config, b drainkit.Bound) (lifecycle.Registrar, error) {
			o, enabled, err := options(cfg)
			if !enabled || err != nil {
				return nil, err
			}
			o.SetEndpoints(registry.EndpointsAt(b.Endpoints, cfg.Registry.Address))
			o.Logger, o.OnOperator = b.Logger, onOperator
			return New(o)
		},
	}
}
