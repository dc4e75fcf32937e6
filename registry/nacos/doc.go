// Package nacos registers a drainkit instance in Nacos (2.x and 3.x, through
// nacos-sdk-go's gRPC client) and watches the instances of a service. It is
// its own Go module, github.com/drainkit/drainkit/registry/nacos, and the
// only drainkit package that imports github.com/nacos-group/nacos-sdk-go/v2:
// a program that does not import it does not pay for the SDK and the Alibaba
// Cloud modules it pulls in. Tested against a real Nacos 3.1 server
// (scripts/nacos.sh) with its shipped authentication defaults, and with
// authentication fully on.
//
// # Registrar
//
// A Registrar follows the lifecycle (see lifecycle.Registrar):
//
//   - READY: the first READY registers an ephemeral instance (it belongs to
//     the client's gRPC connection) with healthy=true, enabled=true, the
//     configured weight and cluster, and metadata drainkit_ready_at
//     (registry.MetaReadyAt, the latest READY). Never before warm-up.
//     nacos-sdk-go keeps every registration it was given, even one whose
//     call failed (a connection not up yet), and sends it again whenever it
//     connects: from its first call on, the instance counts as registered,
//     and Deregister always tells the SDK to drop it.
//   - EJECTED re-registers it with healthy=false: consumers' healthy lists
//     (the 1.x open API with healthyOnly, nacos-sdk-go's SelectInstances,
//     Spring Cloud's discovery) drop it while the registration stays, and
//     READY again makes it healthy with the new READY time. Why healthy and
//     not enabled: enabled is the operator's switch. Nacos keeps an
//     operator's change (console "offline", the admin API) as metadata laid
//     over the client's registration, and that overlay wins over what the
//     client publishes, so an eject written as enabled=false would be
//     undone by any earlier console action, and an operator's offline could
//     not be told apart from drainkit's own.
//   - Every SyncInterval (2s) the Registrar reads its instance back from the
//     server's open API (never from the SDK's cache) and registers it again
//     if the server lost it (a restart, a lost connection), as long as it is
//     READY or EJECTED; never after Deregister.
//   - An operator's offline is honoured: when the server shows the instance
//     disabled although drainkit published it enabled, the Registrar
//     reports Health "maintenance" (EJECTED by operator; Options.OnOperator
//     lets the program move its lifecycle too) and from then on publishes
//     enabled=false itself, so neither its own re-registration nor the
//     SDK's re-registration after a reconnect turns the instance back on,
//     even on a server that lost the operator's overlay. It ends when an
//     operator enables the instance again. Register (the one-liner) ejects
//     the lifecycle then (cause operator: readiness fails) and restores it
//     on the operator's online.
//   - Registration never depends on the admin API. Nacos 3 ships with its
//     client API open and its admin API for admins only: without an
//     admin's username and password the read-back gets 401 or 403, reads
//     the consumers' list instead (GET /v1/ns/instance/list, unhealthy
//     instances included) and the Registrar says once in its log, with
//     the status, that an operator's offline cannot be observed (a
//     disabled instance is absent from every client list). Nacos 2.x,
//     which lacks that API, is read the same way.
//   - DRAINING: Deregister deregisters the instance through the client,
//     bounded and retried within its deadline; Confirm reads the server until
//     it no longer lists the instance. Close, last (a stop hook), closes the
//     client's connection within CloseTimeout: closing it removes the
//     client's ephemeral instances on the server, and it can hang for minutes
//     when the server is unreachable.
//
// A process killed with SIGKILL loses its connection at once (the kernel
// closes the socket): the server drops its ephemeral instances when it
// notices, immediately on a reset connection, else after its connection
// health check (about 20 s with Nacos's defaults).
//
// # Source
//
// NewSource (and Watch) read the consumers' list of a service from the open
// API (GET /v1/ns/instance/list with healthyOnly, which Nacos 1.x, 2.x, 3.x
// and r-nacos serve): a full snapshot first, then again on every push of a
// subscription through nacos-sdk-go (used only as a wake-up, never as data,
// with the SDK's disk cache off) and every ReadInterval in any case, which
// covers lost or once-only subscription callbacks. Only healthy, enabled
// instances of weight > 0 are listed; the weight is in each instance's Meta
// under MetaWeight. Views carry the server's lastRefTime as revision, the
// time received and Source "nacos"; errors keep the last good view; an
// empty list is delivered as empty (the consumer's own rules decide what to
// do with it), unlike the SDK's UpdateCacheWhenEmpty=false, which keeps the
// old list and calls no callback.
//
// # Endpoints
//
// A process serving several protocols registers one instance (one
// deregistration removes them all, and an operator's offline of that
// instance takes every protocol out of rotation): its IP and port are the
// primary endpoint's (the first listener's), and with Options.Scheme set
// (SetEndpoints, which Registration calls with drainkit.Bound.Endpoints)
// its metadata carries kind, the primary scheme as kratos's Nacos registry
// writes it, and drainkit_endpoints, every endpoint as scheme://host:port.
// The Source turns them back into registry.Instance.Endpoints (an instance
// with kind alone, as kratos registers it, has that one endpoint).
//
// # Settings
//
// Register and Registration wire the registrar into drainkit.Main from the
// registry.nacos.* keys (file, DRAINKIT_REGISTRY_NACOS_* variables, flags
// such as --registry-nacos-group): server_addr (host:port list, an IPv6
// address in brackets; empty: NACOS_SERVER_ADDR, and with neither:
// register nowhere), context_path,
// namespace, group, cluster, weight, username and password,
// sync_interval, call_timeout, close_timeout and sdk_dir, checked before
// any listener opens with errors naming the key, where its value came from
// and the allowed range. OptionsFrom turns them into Options; the password
// and the access tokens are never logged nor shown in Status. With a
// username, the SDK logs in for its gRPC calls and the open API reads with
// an access token (POST /v3/auth/user/login, else /v1/auth/login); a
// denied login is tried again a minute later, the reads going on without
// a token meanwhile (a server whose client API is open still answers).
//
// nacos-sdk-go writes a log and a cache of its own. They go under
// registry.nacos.sdk_dir (default DefaultSDKDir, e.g.
// ~/.cache/drainkit/nacos): one directory per process, the log rotated at
// 10 MB with 2 old files, each client's cache (never read: the SDK's
// NotLoadCacheAtStart, drainkit reads the server) removed when the client
// closes, and the directory of a drainkit process that is gone (kill -9)
// removed by the next process using the same sdk_dir. Only directories
// drainkit made (marked by a drainkit-owner file naming their process) are
// ever removed: sdk_dir may hold other files.
//
// The SDK's calls take no context; against a server that accepts and
// never answers they run in goroutines of their own, so that Close keeps
// to close_timeout and Watch returns as soon as its context ends, the rest
// going on in the background.
package nacos
