// Package registry holds what every service-registry integration of drainkit
// shares: the Registrar interface that the lifecycle drives (see
// lifecycle.Registrar), the Status a registrar reports for GET /state, the
// instance-ID scheme, Memory, an in-memory fake registrar for tests, and the
// discovery types every registry watch delivers and consumers read (View,
// Instance, Source, MetaReadyAt).
//
// A registrar announces one instance of a service. The lifecycle calls Sync
// with the latest READY or EJECTED transition, Deregister once at the start of
// the drain, and Confirm (optional) while the propagation window runs. The
// Consul implementation lives in registry/consul.
//
// Out of scope: watching a particular registry (see consul.NewSource), load
// balancing, and registries that cannot express "registered but not passing".
package registry
