// Package registry holds what every service-registry integration of drainkit
// shares: the Registrar interface that the lifecycle drives (see
// lifecycle.Registrar), the Status a registrar reports for GET /state, the
// instance-ID scheme, and Memory, an in-memory fake registrar for tests.
//
// A registrar announces one instance of a service. The lifecycle calls Sync
// with the latest READY or EJECTED transition, Deregister once at the start of
// the drain, and Confirm (optional) while the propagation window runs. The
// Consul implementation lives in registry/consul.
//
// Out of scope: discovering other instances (see consul.Watch), load
// balancing, and registries that cannot express "registered but not passing".
package registry
