package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry/consul"
)

// setupRegistry registers the service in Consul when CONSUL_HTTP_ADDR is set
// (consul/api reads it, CONSUL_HTTP_TOKEN and the other CONSUL_* variables);
// without it, it does nothing. The service name is registry.service if set,
// else the --service flag. httpAddr is the service listener's address: its
// port is registered, and its IP unless it is unspecified (0.0.0.0, ::), in
// which case Consul uses the agent's node address. The TTL check's settings
// come from reg (registry.ttl, registry.heartbeat_interval, ...). A bad
// value returns an error naming the key, before anything is registered.
func setupRegistry(lc *lifecycle.Lifecycle, reg config.RegistryConfig, service string, httpAddr net.Addr, logger *slog.Logger) error {
	if os.Getenv("CONSUL_HTTP_ADDR") == "" {
		return nil
	}
	tcp, ok := httpAddr.(*net.TCPAddr)
	if !ok {
		return fmt.Errorf("registry: %s is not a TCP address", httpAddr)
	}
	opts := consul.FromConfig(reg, service, tcp.Port)
	if !tcp.IP.IsUnspecified() {
		opts.Address = tcp.IP.String()
	}
	opts.Logger = logger
	r, err := consul.New(opts)
	if err != nil {
		return err
	}
	lc.AddRegistrar("consul", r)
	lc.OnStop("consul", func(context.Context) error { return r.Close() })
	return nil
}
