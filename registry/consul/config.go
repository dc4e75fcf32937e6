package consul

import (
	"maps"

	"github.com/drainkit/drainkit/config"
)

// OptionsFrom returns Options for an instance serving on port, with the
// registration settings of r (keys registry.*): the service name is
// r.Service, or defaultService when r.Service is empty; Address is
// r.Address (registry.address; empty: the agent's node address); TTL,
// HeartbeatInterval, CallTimeout and DeregisterCriticalServiceAfter come from
// r; Meta is a copy of r.Meta (registry.meta), which the caller may add to.
// The caller sets what config does not cover (Tags, Logger, the consul/api
// configuration). r's DeregisterTimeout is the lifecycle's
// (config.Config.LifecycleOptions).
//
// It returns the result of Options.Validate (a *budget.RangeError naming
// the key), as etcd.OptionsFrom does; New validates again what the caller
// set.
func OptionsFrom(r config.RegistryConfig, defaultService string, port int) (Options, error) {
	service := r.Service
	if service == "" {
		service = defaultService
	}
	o := DefaultOptions(service, port)
	o.Address = r.Address
	o.TTL = r.TTL
	o.HeartbeatInterval = r.HeartbeatInterval
	o.CallTimeout = r.CallTimeout
	o.DeregisterCriticalServiceAfter = r.DeregisterCriticalServiceAfter
	o.Meta = maps.Clone(r.Meta)
	return o, o.Validate()
}
