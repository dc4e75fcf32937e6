package etcd

import (
	"os"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
)

// Keys returns the settings Register reads: the shared registry keys
// (config.SharedRegistryKeys) and registry.etcd.*. drainkit.Main defines
// their flags, and accepts them from the file and the environment, only in
// a program that wires Register.
func Keys() []string {
	return append(config.SharedRegistryKeys(), config.KeysUnder("registry.etcd.")...)
}

// Register wires etcd registration into drainkit.Main from the loaded
// settings, in one line:
//
//	os.Exit(drainkit.Main(drainkit.WithHTTP("http", ":8080", mux), etcd.Register("orders")))
//
// service is the name registered unless registry.service is set. The
// instance is one key holding every endpoint the program serves
// (drainkit.Bound.Endpoints: each service listener with its scheme, as
// kratos writes them), at registry.address (the pod IP from the downward API
// on Kubernetes) when it is set, else each listener's IP when it is bound to
// one, else this host's first non-loopback address (Options.Address).
//
// It registers when registry.etcd.endpoints, or when that is empty the
// ETCD_ENDPOINTS variable (comma-separated host:port list), names etcd; with
// neither it registers nowhere (the start line says "registries":"none").
// Every registry.etcd.* value, and the client's TLS files, are checked
// before any listener opens (exit 2 naming the key); an unreachable etcd
// does not stop the start (the registrar retries). The instance's version
// (kratos's ServiceInstance.Version, matched by kratos's version filters) is
// registry.etcd.version, or the program's version (drainkit.ProgramVersion)
// when that is empty. The registrar logs
// through the program's logger and is closed after the drain.
func Register(service string) drainkit.Option {
	options := func(cfg *config.Config) (Options, bool, error) {
		reg := cfg.Registry
		if reg.Etcd.Endpoints == "" {
			reg.Etcd.Endpoints = os.Getenv("ETCD_ENDPOINTS")
		}
		if reg.Etcd.Endpoints == "" {
			return Options{}, false, nil
		}
		o, err := OptionsFrom(reg, service, 1)
		if o.Version == "" {
			o.Version = drainkit.ProgramVersion()
		}
		return o, true, err
	}
	return drainkit.WithRegistrar("etcd", drainkit.Registration{
		Keys:    Keys(),
		Enabled: func(cfg *config.Config) bool { _, enabled, _ := options(cfg); return enabled },
		Check: func(cfg *config.Config) error {
			o, enabled, err := options(cfg)
			if !enabled || err != nil {
				return err
			}
			r, err := New(o)
			if err != nil {
				return err
			}
			return r.Close()
		},
		Build: func(cfg *config.Config, b drainkit.Bound) (lifecycle.Registrar, error) {
			o, enabled, err := options(cfg)
			if !enabled || err != nil {
				return nil, err
			}
			o.SetEndpoints(registry.EndpointsAt(b.Endpoints, cfg.Registry.Address))
			o.Logger = b.Logger
			return New(o)
		},
	})
}
