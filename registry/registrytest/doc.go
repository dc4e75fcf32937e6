// Package registrytest provides Memory, an in-memory fake of a registry
// registrar (lifecycle.Registrar) for testing a service's wiring and drain
// without a registry server. drainkit's own registry tests run against real
// Consul, etcd and Nacos servers; this is for users' unit tests.
package registrytest
