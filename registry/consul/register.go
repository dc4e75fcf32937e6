package consul

import (
	"os"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
)

// Keys returns the settings Register reads: the shared registry keys
// (config.SharedRegistryKeys) and Consul's TTL-check settings
// (registry.ttl, registry.heartbeat_interval, registry.call_timeout,
// registry.deregister_critical_service_after). drainkit.Main defines their
// flags, and accepts them from the file and the environment, only in a
// program that wires Register.
func Keys() []string {
	return append(config.SharedRegistryKeys(), "registry.ttl", "registry.heartbeat_interval",
		"registry.deregister_critical_service_after", "registry.call_timeout")
}

// Register wires Consul registration into drainkit.Main from the loaded
// settings, in one line:
//
//	os.Exit(drainkit.Main(drainkit.WithHTTP("http", ":8080", mux), consul.Register("orders")))
//
// service is the name registered unless registry.service is set. The
// instance is one service registration holding every endpoint the program
// serves (drainkit.Bound.Endpoints), at registry.address (the pod IP from
// the downward API on Kubernetes) when it is set, else each listener's IP
// when it is bound to one, else empty: the agent's node address (see
// Options.Address for what an explicit address enables).
//
// It registers when CONSUL_HTTP_ADDR is set (consul/api reads it,
// CONSUL_HTTP_TOKEN and the other CONSUL_* variables); without it, nowhere
// (the start line says "registries":"none"). The settings and the CONSUL_*
// variables are checked before any listener opens (exit 2 naming them); an
// unreachable agent does not stop the start. The registrar logs through the
// program's logger and is closed after the drain.
func Register(service string) drainkit.Option {
	enabled := os.Getenv("CONSUL_HTTP_ADDR") != ""
	return drainkit.WithRegistrar("consul", drainkit.Registration{
		Keys:    Keys(),
		Enabled: func(*config.Config) bool { return enabled },
		Check: func(cfg *config.Config) error {
			if !enabled {
				return nil
			}
			o, err := OptionsFrom(cfg.Registry, service, 1)
			if err != nil {
				return err
			}
			r, err := New(o)
			if err != nil {
				return err
			}
			return r.Close()
		},
		Build: func(cfg *config.Config, b drainkit.Bound) (lifecycle.Registrar, error) {
			if !enabled {
				return nil, nil
			}
			opts, err := OptionsFrom(cfg.Registry, service, 1)
			if err != nil {
				return nil, err
			}
			opts.SetEndpoints(registry.EndpointsAt(b.Endpoints, cfg.Registry.Address))
			opts.Logger = b.Logger
			return New(opts)
		},
	})
}
