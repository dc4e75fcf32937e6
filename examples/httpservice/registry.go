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
	"github.com/drainkit/drainkit/registry/etcd"
)

// setupRegistry registers the service in Consul when CONSUL_HTTP_ADDR is set
// (consul/api reads it, CONSUL_HTTP_TOKEN and the other CONSUL_* variables),
// and in etcd when registry.etcd.endpoints or ETCD_ENDPOINTS (comma-separated
// host:port list) is set; with neither, it does nothing. The service name is
// registry.service if set, else the --service flag. httpAddr is the service
// listener's address: its port is registered, and its IP unless it is
// unspecified (0.0.0.0, ::), in which case Consul uses the agent's node
// address and etcd this host's first non-loopback address. The settings come
// from reg (registry.ttl, registry.heartbeat_interval, registry.etcd.*, ...).
// A bad value returns an error naming the key, before anything is
// registered.
func setupRegistry(lc *lifecycle.Lifecycle, reg config.RegistryConfig, service string, httpAddr net.Addr, logger *slog.Logger) error {
	useConsul := os.Getenv("CONSUL_HTTP_ADDR") != ""
	if reg.Etcd.Endpoints == "" {
		reg.Etcd.Endpoints = os.Getenv("ETCD_ENDPOINTS")
	}
	useEtcd := reg.Etcd.Endpoints != ""
	if !useConsul && !useEtcd {
		return nil
	}
	tcp, ok := httpAddr.(*net.TCPAddr)
	if !ok {
		return fmt.Errorf("registry: %s is not a TCP address", httpAddr)
	}
	host := ""
	if !tcp.IP.IsUnspecified() {
		host = tcp.IP.String()
	}
	if useConsul {
		if err := setupConsul(lc, reg, service, tcp.Port, host, logger); err != nil {
			return err
		}
	}
	if useEtcd {
		return setupEtcd(lc, reg, service, tcp.Port, host, logger)
	}
	return nil
}

func setupConsul(lc *lifecycle.Lifecycle, reg config.RegistryConfig, service string, port int, host string, logger *slog.Logger) error {
	opts := reg.ConsulOptions(service, port)
	opts.Address = host
	opts.Logger = logger
	r, err := consul.New(opts)
	if err != nil {
		return err
	}
	lc.AddRegistrar("consul", r)
	lc.OnStop("consul", func(context.Context) error { return r.Close() })
	return nil
}

// setupEtcd registers in etcd under kratos's layout
// (<registry.etcd.prefix>/<service>/<instance id>, endpoint http://host:port).
func setupEtcd(lc *lifecycle.Lifecycle, reg config.RegistryConfig, service string, port int, host string, logger *slog.Logger) error {
	opts, err := etcd.OptionsFrom(reg, service, port)
	if err != nil {
		return err
	}
	opts.Address = host
	opts.Logger = logger
	r, err := etcd.New(opts)
	if err != nil {
		return err
	}
	lc.AddRegistrar("etcd", r)
	lc.OnStop("etcd", func(context.Context) error { return r.Close() })
	return nil
}
