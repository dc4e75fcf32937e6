// Package registrytest provides Memory, an in-memory fake of a registry
// registrar (lifecycle.Registrar), for tests of a service's wiring and drain
// where the registry is not what is under test. The registry integrations
// themselves are tested against real Consul, etcd and Nacos servers.
package registrytest
