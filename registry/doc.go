// Package registry holds what every service-registry integration of drainkit
// shares: the Registrar interface that the lifecycle drives (see
// lifecycle.Registrar), the Status a registrar reports for GET /state, the
// instance-ID scheme, and the discovery types every registry watch delivers
// and consumers read (View, Instance, Source, MetaReadyAt). The in-memory
// fake registrar for tests is registrytest.Memory.
//
// A registrar announces one instance of a service. The lifecycle calls Sync
// with the latest READY or EJECTED transition, Deregister once at the start of
// the drain, and Confirm (optional) while the propagation window runs. The
// implementations are registry/consul, registry/etcd and registry/nacos (a
// module of its own); each also watches its registry for consumers
// (NewSource).
//
// Out of scope: watching a particular registry (see each one's NewSource), load
// balancing, and registries that cannot express "registered but not passing".
package registry
