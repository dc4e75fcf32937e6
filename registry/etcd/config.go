package etcd

import (
	"maps"
	"strconv"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"go.etcd.io/etcd/client/pkg/v3/transport"
)

// OptionsFrom returns Options for an instance serving on port from the
// registry settings of a config.Config: registry.service (defaultService
// when empty), registry.address (Address; empty keeps the default) and
// registry.etcd.* (endpoints, prefix, ttl,
// keepalive_interval, call_timeout, dial_timeout, username, password and the
// TLS files, which go into the etcd client's own configuration; version into
// Version, which stays empty when the setting is: Register then takes the
// program's version); Meta is a copy of registry.meta, registered as kratos's
// instance metadata, which the caller may add to. The caller sets what
// config does not cover (Scheme, Logger).
//
// It returns a *budget.RangeError naming registry.etcd.ca_file when the
// TLS files cannot be loaded, and otherwise the result of Options.Validate,
// so an empty endpoint list fails here naming registry.etcd.endpoints.
func OptionsFrom(reg config.RegistryConfig, defaultService string, port int) (Options, error) {
	service := reg.Service
	if service == "" {
		service = defaultService
	}
	e := reg.Etcd
	o := DefaultOptions(service, port)
	o.Address = reg.Address
	o.Meta = maps.Clone(reg.Meta)
	o.Prefix, o.TTL, o.KeepAliveInterval, o.CallTimeout = e.Prefix, e.TTL, e.KeepAliveInterval, e.CallTimeout
	o.Client.Endpoints = e.EndpointList()
	o.Client.DialTimeout = e.DialTimeout
	o.Client.Username, o.Client.Password = e.Username, string(e.Password)
	o.Version = e.Version
	if e.CAFile != "" || e.CertFile != "" || e.KeyFile != "" {
		info := transport.TLSInfo{CertFile: e.CertFile, KeyFile: e.KeyFile, TrustedCAFile: e.CAFile}
		tc, err := info.ClientConfig()
		if err != nil {
			return o, &budget.RangeError{Key: "registry.etcd.ca_file", Value: strconv.Quote(e.CAFile),
				Allowed: "registry.etcd.ca_file, cert_file and key_file must be readable PEM files (" + err.Error() + ")"}
		}
		o.Client.TLS = tc
	}
	return o, o.Validate()
}
