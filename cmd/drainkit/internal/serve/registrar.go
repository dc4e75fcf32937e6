package serve

import (
	"fmt"
	"log/slog"
	"net"
	"os"

	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/consul"
	"github.com/drainkit/drainkit/registry/etcd"
	"github.com/drainkit/drainkit/registry/nacos"
)

// newRegistrar returns the registrar of the instance listening on httpLn and
// its name, when o.Service is set (nil and "" otherwise): etcd when
// ETCD_ENDPOINTS (or registry.etcd.endpoints) names it, under a lease in
// kratos's key layout with the registry.etcd.* settings; else Nacos when
// NACOS_SERVER_ADDR names a server, an ephemeral instance with the NACOS_*
// settings (onOperator, if set, gets an operator's offline and online);
// else Consul, the agent from CONSUL_HTTP_ADDR and the other CONSUL_*
// variables, with the registry.* TTL check settings.
func newRegistrar(o Options, httpLn, grpcLn net.Listener, logger *slog.Logger, onOperator func(offline bool)) (registry.Registrar, string, error) {
	if o.Service == "" {
		return nil, "", nil
	}
	host, port := splitAddr(httpLn.Addr())
	eps := endpoints(httpLn, grpcLn)
	reg := o.Config.Registry
	if reg.Etcd.Endpoints == "" {
		reg.Etcd.Endpoints = os.Getenv("ETCD_ENDPOINTS")
	}
	if reg.Etcd.Endpoints != "" {
		opts, err := etcd.OptionsFrom(reg, o.Service, port)
		if err != nil {
			return nil, "", err
		}
		if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
			opts.Address = host // else the registrar picks this host's address
		}
		opts.Logger = logger
		if eps != nil {
			opts.SetEndpoints(eps)
		}
		r, err := etcd.New(opts)
		if err != nil {
			return nil, "", err
		}
		return r, "etcd", nil
	}
	if nopts, ok, err := nacos.OptionsFromEnv(o.Service, port); ok || err != nil {
		if err != nil {
			return nil, "", err
		}
		if eps != nil {
			return nil, "", fmt.Errorf("--grpc-addr: the Nacos registrar registers one endpoint; drop --grpc-addr or register in etcd or Consul")
		}
		if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
			nopts.Address = host
		}
		nopts.Logger, nopts.OnOperator = logger, onOperator
		r, err := nacos.New(nopts)
		if err != nil {
			return nil, "", err
		}
		return r, "nacos", nil
	}
	opts, err := consul.OptionsFrom(reg, o.Service, port)
	if err != nil {
		return nil, "", err
	}
	opts.Address, opts.Logger = host, logger
	if eps != nil {
		opts.SetEndpoints(eps)
	}
	r, err := consul.New(opts)
	if err != nil {
		return nil, "", err
	}
	return r, "consul", nil
}

// endpoints are the instance's endpoints (DESIGN.md section 6f) when it
// serves gRPC too: "http" (the primary one) and "grpc", each at its
// listener's port; nil with HTTP only, which registers as before.
func endpoints(httpLn, grpcLn net.Listener) []registry.Endpoint {
	if grpcLn == nil {
		return nil
	}
	eps := make([]registry.Endpoint, 0, 2)
	for _, e := range []struct {
		scheme string
		ln     net.Listener
	}{{"http", httpLn}, {"grpc", grpcLn}} {
		host, port := splitAddr(e.ln.Addr())
		ep := registry.Endpoint{Scheme: e.scheme, Port: port}
		if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
			ep.Address = host
		}
		eps = append(eps, ep)
	}
	return eps
}
