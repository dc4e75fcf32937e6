// Package etcd registers a drainkit instance in etcd under a lease (DESIGN.md
// section 6, as registry/consul does for Consul) and watches the instances of
// a service. It is the only drainkit package that imports the etcd client
// (go.etcd.io/etcd/client/v3): a service that does not import it does not
// pay for it.
//
// # Key layout
//
// By default the layout of kratos's etcd registry, so that kratos consumers
// discover drainkit services and drainkit consumers discover kratos services
// (checked against github.com/go-kratos/kratos/v2 v2.8.3, whose
// registry.ServiceInstance is the value, and contrib/registry/etcd at commit
// 16c2f39, which writes and reads it):
//
//	key:   <prefix>/<service>/<instance id>      prefix default "/microservices"
//	value: {"id":"<instance id>","name":"<service>","version":"<registry.etcd.version or the program's>",
//	        "metadata":{"drainkit_ready_at":"2026-12-01T06:30:00.123456789Z"},
//	        "endpoints":["http://10.0.0.7:8080"]}
//
// The value's metadata carries registry.MetaReadyAt, the time of the latest
// READY transition (RFC 3339, UTC, nanoseconds), by the rule
// registry.MetaReadyAt states: READY again after EJECTED writes the key back
// with the new time, so consumers ramp the instance's traffic again (slow
// start). Options.Prefix (key registry.etcd.prefix) changes the prefix.
//
// One registration per instance (DESIGN.md section 6f): a process serving
// HTTP and gRPC writes one key under one lease whose endpoints list both,
// "http://10.0.0.7:8080" first and then "grpc://10.0.0.7:9090"
// (Options.Extra, or Options.SetEndpoints with drainkit.Bound.Endpoints),
// as kratos registers an app with two servers; the drain revokes that one
// lease. The watch delivers every endpoint (registry.Instance.Endpoints),
// and consumers pick theirs by scheme.
//
// # Registrar
//
// A Registrar follows the lifecycle (see lifecycle.Registrar):
//
//   - READY: on the first READY it grants a lease of TTL (default 10s, at
//     least 2s, see DefaultTTL and MinTTL) and writes the key under it in one
//     transaction; it then keeps the lease alive every KeepAliveInterval (at
//     most TTL/3), one call in flight at a time, each bounded by CallTimeout.
//   - EJECTED: the key is deleted (only if it is still attached to this
//     Registrar's lease), so consumers stop discovering the instance, while
//     the lease is kept alive; READY again writes the key again.
//   - DRAINING: Deregister stops the keep-alives and revokes the lease, which
//     deletes the key in the same step, synchronously, retrying with jittered
//     backoff until its context's deadline; an unreachable etcd makes it
//     return an error, never block the drain (the key then leaves when the
//     lease expires). Confirm then reads the key and watches it until it is
//     deleted, so the drain timeline records both offsets.
//   - If etcd no longer knows the lease (it lost its data, or the lease
//     expired during a partition), the next keep-alive sees "lease not found"
//     and the Registrar grants a new lease and writes the key again, while
//     READY or EJECTED; never after Deregister was called.
//
// A process killed with SIGKILL stops keeping its lease alive: etcd deletes
// its key at most TTL after the last keep-alive.
//
// # Instance identity
//
// IDs come from registry.InstanceID (service, hostname, port and a random
// suffix), so every process writes its own key. A key belongs to its lease:
// a Registrar writes its key only if the key is absent or already attached
// to its own lease, and deletes it (EJECTED) only under that condition. A
// restarted process therefore never has its registration removed by its
// predecessor: the predecessor's revocation, or the expiry of its lease,
// removes only the keys attached to the predecessor's lease, and leftovers
// of a killed predecessor die with that lease. If Options.ID is set to a
// fixed value and the key is still held by a predecessor's lease, Sync
// reports ErrKeyHeld and the Registrar registers once that lease ends (at
// most TTL later).
//
// # Watch
//
// Watch (and NewSource, a registry.Source) reads the instances of a service
// with one Get at a revision R, then watches from R+1; a compacted revision
// triggers a fresh Get, never a silent gap; errors keep the last good view.
// Every registry.View is stamped with etcd's store revision, the time it was
// received and Source "etcd", and only changed views are delivered; a store
// revision that went backwards (a restore) starts a new Epoch.
//
// # Settings
//
// The client configuration (endpoints, dial timeout, TLS, username and
// password) is the etcd client's own clientv3.Config in Options.Client;
// OptionsFrom builds Options from drainkit's config keys registry.etcd.*.
// The password is never logged.
package etcd
