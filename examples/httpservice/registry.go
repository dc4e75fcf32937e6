package main

import (
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry/consul"
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
		Check: func(cfg *config.Config) error {
			if !enabled {
				return nil
			}
			r, err := consul.New(consul.FromConfig(cfg.Registry, service, 1))
			if err != nil {
				return err
			}
			return r.Close()
		},
		Build: func(cfg *config.Config, addrs map[string]net.Addr) (lifecycle.Registrar, error) {
			if !enabled {
				return nil, nil
			}
			tcp, ok := addrs["http"].(*net.TCPAddr)
			if !ok {
				return nil, fmt.Errorf("%s is not a TCP address", addrs["http"])
			}
			opts := consul.FromConfig(cfg.Registry, service, tcp.Port)
			if !tcp.IP.IsUnspecified() {
				opts.Address = tcp.IP.String()
			}
			opts.Logger = logger
			return consul.New(opts)
		},
	}
}
