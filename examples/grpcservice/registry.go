package main

import (
	"cmp"
	"log/slog"
	"os"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/consul"
	"github.com/drainkit/drainkit/registry/etcd"
)

// registrars register the instance once per registry, with both of its
// endpoints (drainkit.Bound.Endpoints: "http://host:port" and
// "grpc://host:port"): in etcd, in kratos's layout, when
// registry.etcd.endpoints or ETCD_ENDPOINTS is set; in Consul, as one
// service whose tagged addresses hold both endpoints, when CONSUL_HTTP_ADDR
// is set. The drain removes that one registration.
func registrars(logger *slog.Logger) []drainkit.Option {
	etcdEndpoints := func(cfg *config.Config) string {
		return cmp.Or(cfg.Registry.Etcd.Endpoints, os.Getenv("ETCD_ENDPOINTS"))
	}
	return []drainkit.Option{
		drainkit.WithRegistrar("etcd", registration(func(cfg *config.Config) bool { return etcdEndpoints(cfg) != "" },
			func(cfg *config.Config, eps []registry.Endpoint) (registry.Registrar, error) {
				reg := cfg.Registry
				reg.Etcd.Endpoints = etcdEndpoints(cfg)
				o, err := etcd.OptionsFrom(reg, "grpcservice", 1)
				if err != nil {
					return nil, err
				}
				o.SetEndpoints(eps)
				o.Logger = logger
				return etcd.New(o)
			})),
		drainkit.WithRegistrar("consul", registration(func(*config.Config) bool { return os.Getenv("CONSUL_HTTP_ADDR") != "" },
			func(cfg *config.Config, eps []registry.Endpoint) (registry.Registrar, error) {
				o, err := consul.OptionsFrom(cfg.Registry, "grpcservice", 1)
				if err != nil {
					return nil, err
				}
				o.SetEndpoints(eps)
				o.Logger = logger
				return consul.New(o)
			})),
	}
}

// registration checks a registrar's settings before any listener opens (by
// building one and closing it) and builds the real one with the bound
// endpoints, when enabled.
func registration(enabled func(*config.Config) bool, build func(*config.Config, []registry.Endpoint) (registry.Registrar, error)) drainkit.Registration {
	return drainkit.Registration{
		Enabled: enabled,
		Check: func(cfg *config.Config) error {
			if !enabled(cfg) {
				return nil
			}
			r, err := build(cfg, []registry.Endpoint{{Scheme: "http", Port: 1}})
			if err != nil {
				return err
			}
			return r.Close()
		},
		Build: func(cfg *config.Config, b drainkit.Bound) (lifecycle.Registrar, error) {
			if !enabled(cfg) {
				return nil, nil
			}
			r, err := build(cfg, b.Endpoints)
			if err != nil {
				return nil, err
			}
			return r, nil
		},
	}
}
