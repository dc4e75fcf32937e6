// Package consul registers a drainkit instance in Consul (DESIGN.md section
// 6) and watches the passing instances of a service.
//
// One registration per instance (DESIGN.md section 6f): a process serving
// HTTP and gRPC registers one service with one TTL check, its first
// endpoint as the service's address and port and every endpoint as a tagged
// address keyed by its scheme whose address is the endpoint's URL
// ("grpc": "grpc://10.0.0.7:9090"), the encoding of kratos's Consul registry
// (Options.Scheme and Options.Extra, or Options.SetEndpoints). The watch
// reads them back into registry.Instance.Endpoints.
//
// # Registrar
//
// A Registrar follows the lifecycle (see lifecycle.Registrar):
//
//   - READY: on the first READY it registers the service and its TTL check in
//     one call, the check passing at once; it then heartbeats the check every
//     HeartbeatInterval (at most TTL/3), one call in flight at a time, each
//     bounded by CallTimeout.
//   - EJECTED by the readiness checks: the TTL check is set critical (and kept
//     critical by the heartbeat). EJECTED by an operator: Consul service
//     maintenance mode is enabled; Restore disables it.
//   - DRAINING: Deregister stops the heartbeat and deregisters synchronously,
//     retrying with jittered backoff until its context's deadline; a slow or
//     unreachable agent makes it return an error, never block the drain.
//     Confirm then waits, through blocking queries on the health endpoint,
//     until the instance is no longer listed as passing.
//   - If the agent forgets the service (an agent restart without state), the
//     next heartbeat sees "Unknown check ID" and registers again, while READY
//     or EJECTED; never after Deregister was called.
//
// A process killed with SIGKILL stops heartbeating: its check turns critical
// after TTL, and Consul removes the registration after
// DeregisterCriticalServiceAfter (at least one minute).
//
// # Instance identity
//
// IDs come from registry.InstanceID (service, hostname, port and a random
// suffix), so they never collide across hosts and every process has a new
// one. Before its first registration a Registrar removes earlier drainkit
// registrations of the same service on the same agent with the same address
// and port, but only when it can prove that no other live process holds
// them: Options.Address is an explicit IP of one of this host's interfaces
// (and Port, by contract, a port this process listens on). This keeps a dead
// predecessor (kill -9, OOM) from staying passing beside its successor until
// its TTL runs out. An empty Address proves nothing: Consul substitutes the
// node's address, which every instance behind one agent shares (pods behind a
// per-node agent), so such registrations are never removed, and a dead
// predecessor's entry turns critical after its TTL instead. The
// predecessor's own deregistration or Consul's clean-up can only ever remove
// the predecessor's ID, never the successor's.
//
// The registration's meta carries "drainkit_managed" and registry.MetaReadyAt
// (RFC 3339 UTC with nanoseconds), which consumers read for slow start: the
// time of the latest READY, by the rule registry.MetaReadyAt states. READY
// again after EJECTED first re-registers the service under its ID with the
// new time (the agent keeps the TTL check's status and maintenance mode),
// then turns maintenance mode off or sets the check passing, so the instance
// is never back in rotation with the old time.
//
// # Settings
//
// The agent address, ACL token and TLS settings come from Options.Consul, by
// default api.DefaultConfig(), which reads CONSUL_HTTP_ADDR,
// CONSUL_HTTP_TOKEN, CONSUL_HTTP_TOKEN_FILE, CONSUL_HTTP_SSL,
// CONSUL_CACERT, CONSUL_CLIENT_CERT, CONSUL_CLIENT_KEY and the other
// variables consul/api documents. The token is never logged. New (and
// Options.Validate) reject an agent address that is not one and a CA,
// certificate, key or token file that cannot be read, with a *SettingError
// naming the variable and its value, so that a bad setting fails at start.
//
// # Watch
//
// Watch, Watcher and NewSource follow the passing instances of a service with
// blocking queries and deliver registry.View (Source "consul", Revision the
// X-Consul-Index, Epoch incremented when that index goes backwards), only
// when the view changed; on errors they keep the last good instances, back
// off, and report recovery as soon as the agent answers again. An answer
// with a lower index that replays one already taken (same index, same
// instances, no failed query since: a caching proxy, a stale read) is
// dropped rather than taken as an index reset, so a removed instance never
// comes back from it (see Watch). NewSource is the registry.Source that
// consumers take.
package consul
