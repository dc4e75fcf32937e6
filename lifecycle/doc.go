// Package lifecycle is the core of drainkit: the instance state machine, the
// drain sequence and its timeline, readiness-check hysteresis, and Run, which
// wraps a service's main and turns SIGTERM/SIGINT into a drain.
//
// The data flow is one way:
//
//	signal / POST /drain / Drain()  ->  Lifecycle  ->  probes, registrars, servers
//
// A Lifecycle moves through five states (see State). Participants plug in
// through small interfaces defined here (Server, Registrar, Observer) and
// named functions (readiness checks, warm-up and stop hooks); Run hands each
// Server the ServerHooks through which it reports its traffic. The time
// budget it enforces, and the settings' ranges, are package budget's. Of the
// module, this package imports only internal/syncx and budget; every other
// package depends on it.
//
// The drain sequence, started by the first signal, POST /drain or Drain:
//
//	t0 DRAINING: readiness fails at once, servers enter lame-duck mode
//	   -> registrars deregister (bounded, retried by the registrar; a failure is
//	      logged and never blocks the drain)
//	   -> propagation window: at least PropagationMin after deregistration
//	      (unless Options.MinIsDefault and the registry confirmed it),
//	      then until no request arrived for PropagationQuiet and every
//	      caller has moved (no request for 3 of its usual gaps before the
//	      drain; ServerHooks.Arrived reports each request's Caller), never
//	      past t0 + PropagationMax
//	   -> listeners closed -> in-flight work finishes, or is force-closed at
//	      DrainTimeout -> stop hooks (reverse order, StopTimeout)
//	   -> STOPPED.
//
// The durations are the fields of budget.Timings (Options.Timings).
//
// Every step is recorded in a Timeline (offsets from t0, late arrivals,
// in-flight at listener close, forced closes), logged as one line at exit and
// available from Lifecycle.Status.
//
// Out of scope: this package does not open listeners, speak HTTP or gRPC, or
// talk to a registry; see the httpdrain, grpcdrain, probes and registry
// packages. To test a service's wiring and drain without sockets,
// lifecycletest.Server is a fake Server (and registrytest.Memory a fake
// Registrar).
package lifecycle
