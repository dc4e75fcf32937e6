package main

import (
	"log/slog"
	"os"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry/consul"
	"github.com/drainkit/drainkit/registry/etcd"
)

// consulRegistration registers the service in Consul when CONSUL_HTTP_ADDR
// is set (consul/api reads it, CONSUL_HTTP_TOKEN and the other CONSUL_*
// variables); without it, nothing is registered. The service name is
// registry.service if set, else service (the --service flag). The TTL
// check's settings come from the registry.* keys.
//
// Check builds the registrar once, before any listener opens, so that a bad
// registry.* value or CONSUL_* variable fails the start (exit 2) with an
// error naming it. Build makes the real one with the service listener's
// bound port, and its IP unless it is unspecified (0.0.0.0, ::), in which
// case Consul uses the agent's node address.
func consulRegistration(service string, logger *slog.Logger) drainkit.Registration {
	enabled := os.Getenv("CONSUL_HTTP_ADDR") != ""
	return drainkit.Registration{
		Enabled: func(*config.Config) bool { return enabled },
		Check: func(cfg *config.Config) error {
			if !enabled {
				return nil
			}
			opts, err := consul.OptionsFrom(cfg.Registry, service, 1)
			if err != nil {
				return err
			}
			r, err := consul.New(opts)
			if err != nil {
				return err
			}
			return r.Close()
		},
		Build: func(cfg *config.Config, b drainkit.Bound) (lifecycle.Registrar, error) {
			if !enabled {
				return nil, nil
			}
			opts, err := consul.OptionsFrom(cfg.Registry, service, 1)
			if err != nil {
				return nil, err
			}
			opts.SetEndpoints(b.Endpoints)
			opts.Logger = logger
			return consul.New(opts)
		},
	}
}

// etcdRegistration registers the service in etcd when registry.etcd.endpoints
// or, if that is empty, ETCD_ENDPOINTS (comma-separated host:port list) is
// set; without either, nothing is registered. The key is kratos's layout,
// <registry.etcd.prefix>/<service>/<instance id>, under a lease with the
// registry.etcd.* settings. Like consulRegistration, Check builds the
// registrar before any listener opens, so that a bad registry.etcd.* value
// (or an empty endpoint list) fails the start naming the key; Build
// registers the service listener's bound port, and its IP unless it is
// unspecified, in which case this host's first non-loopback address.
func etcdRegistration(service string, logger *slog.Logger) drainkit.Registration {
	options := func(cfg *config.Config, port int) (etcd.Options, bool, error) {
		reg := cfg.Registry
		if reg.Etcd.Endpoints == "" {
			reg.Etcd.Endpoints = os.Getenv("ETCD_ENDPOINTS")
		}
		if reg.Etcd.Endpoints == "" {
			return etcd.Options{}, false, nil
		}
		o, err := etcd.OptionsFrom(reg, service, port)
		return o, true, err
	}
	return drainkit.Registration{
		Enabled: func(cfg *config.Config) bool { _, enabled, _ := options(cfg, 1); return enabled },
		Check: func(cfg *config.Config) error {
			o, enabled, err := options(cfg, 1)
			if !enabled || err != nil {
				return err
			}
			r, err := etcd.New(o)
			if err != nil {
				return err
			}
			return r.Close()
		},
		Build: func(cfg *config.Config, b drainkit.Bound) (lifecycle.Registrar, error) {
			o, enabled, err := options(cfg, 1)
			if !enabled || err != nil {
				return nil, err
			}
			o.SetEndpoints(b.Endpoints)
			o.Logger = logger
			return etcd.New(o)
		},
	}
}
