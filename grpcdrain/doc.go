// Package grpcdrain drains a grpc-go server as part of a drainkit lifecycle
// (DESIGN.md section 4), so that a rolling restart loses no call:
//
//	ln, err := net.Listen("tcp", ":9090")
//	...
//	grpcdrain.Add(lc, "grpc", ln, func(gs *grpc.Server) {
//		pb.RegisterGreeterServer(gs, greeter)
//	}, grpcdrain.WithServerOptions(grpc.Creds(creds)))
//	return lifecycle.ExitCode(lc.Run(ctx))
//
// grpc.Server.GracefulStop alone is not enough for that: it sends GOAWAY but
// closes the listeners at the same moment, so clients that have not yet
// learned of the drain (their resolver, registry or load balancer still
// lists the instance) are refused during the propagation window. grpc-go
// offers no way to send GOAWAY while still accepting, nor to send it to one
// connection (grpc/grpc-go#6830 discusses the gap). grpcdrain therefore
// builds the *grpc.Server itself, more than once (see New), accepts on the
// caller's listener itself and hands each connection to the grpc.Server
// currently accepting. To send GOAWAY it retires a grpc.Server: a fresh one
// takes over accepting, and the retired one's GracefulStop sends GOAWAY to
// its connections only, and ends when their calls have ended. The listener
// stays open until the window ends.
//
// A *grpc.Server that the caller or a framework builds (its own
// interceptors, recovery, stats handlers) is drained the same way with
// Adopt: the caller's function builds it from the options drainkit gives.
// A server that can be built only once is adopted with WithSingleServer,
// which tells clients to move only when the listener closes (see there).
//
// # What clients see
//
// STARTING (warm-up): nothing is served yet; the health status of "" (the
// whole server) and of the services named with WithHealthServices is
// NOT_SERVING.
//
// READY: calls are served; health is SERVING.
//
// EJECTED: calls are still served and connections are left alone (an
// ejection can end); health is NOT_SERVING, so clients that check health
// (client-side health checking, a health-checking load balancer, the
// kubelet's gRPC probe) move away.
//
// DRAINING, at t0 (LameDuck), before any listener closes and in this order:
//
//   - health goes NOT_SERVING for every service, Watch streams receive the
//     update, and later attempts to set SERVING are ignored
//     (health.Server.Shutdown);
//   - Draining channels close: long-lived handlers should end their streams;
//   - every connection opened before t0 gets GOAWAY (the graceful double
//     GOAWAY of grpc-go: calls the client started before reading it are
//     still served). Its calls and streams in flight continue; the client
//     opens its next call on a new connection (grpc-go also asks its
//     resolver to re-resolve), which reaches another instance once the
//     client knows of one, and this one, still accepting, otherwise.
//
// The propagation window (until the lifecycle's window ends): new
// connections are accepted and their calls served. A connection opened now
// gets GOAWAY once it is between WithGoAwayAfter and twice that old (default
// 1s to 2s), so a client that still routes here keeps being told to move,
// and every one of its calls succeeds. Each call except health checks is a
// late arrival (lifecycle.ServerHooks.Arrived) and keeps the window open
// for propagation.quiet, and its caller (the peer's IP: not the
// user-agent, whose reading would allocate) keeps it open until it has
// moved, judged by its own rate before the drain.
//
// Window end (CloseListeners): the listener closes, so new connections are
// refused (ECONNREFUSED) and clients must go elsewhere; every open
// connection that has not had GOAWAY gets it; health Watch streams end with
// codes.Unavailable. Calls and streams in flight continue and are counted in
// the timeline (InFlightAtClose).
//
// In-flight work (AwaitIdle): the drain ends for this server as soon as the
// last call or stream ends (every handler's return wakes AwaitIdle; there is
// no polling). Each retired grpc.Server then writes its last statuses and
// closes its connections; Serve returns when all have stopped.
//
// drain.timeout (ForceClose): every connection is closed, which ends every
// retired grpc.Server's GracefulStop once its handlers return (grpcdrain
// never calls grpc.Server.Stop on a server in GracefulStop: grpc-go before
// v1.85.0 deadlocks there while a handler ignores cancellation,
// grpc-go#9393). The clients of the calls and streams still running see
// codes.Unavailable; their handlers' contexts are cancelled; their number
// is returned, recorded in the timeline, and makes Run exit with code 1.
//
// # The request path
//
// Every grpc.Server gets a unary and a stream interceptor, installed with
// grpc.ChainUnaryInterceptor and grpc.ChainStreamInterceptor before the
// caller's own chained interceptors (given with WithServerOptions), which
// keep working; one set with grpc.UnaryInterceptor or
// grpc.StreamInterceptor runs outside them. For each call they report the
// arrival to the lifecycle and count the call as in flight while the rest
// of the chain and the handler run (InFlight: unary calls as Calls,
// streaming calls as Streams). The count ends in a defer, so a handler's
// panic that a recovery interceptor outside them recovers leaves nothing
// counted. They allocate nothing (WithIdentity adds its header, one
// allocation per call). Their cost is two atomic adds
// (about 8 ns each on this project's machine) on a stripe of a striped
// counter chosen from the memory page of the call's grpc.UnaryServerInfo or
// grpc.StreamServerInfo, which grpc-go allocates per call on the core serving
// it: calls on different cores rarely share a cache line, so calls in
// parallel cost no more than sequential ones (a random stripe per call, as
// before, moved a line between cores on most calls). Measured with
//
//	go test -run '^$' -bench Interceptor -benchmem -count 5 ./grpcdrain
//
// on 2 shared cores under a load average of about 20, as CPU time per call
// (cpu-ns/op; the wall-clock ns/op there mostly measured the wait for a
// core), medians over bare handlers: unary +18 ns sequential and +16 ns in
// parallel, streams +17 ns and +19 ns, 0 allocations. Health checks
// (grpc.health.v1.Health) are not arrivals: they are not traffic, and a
// prober would otherwise hold the window open. Health Watch streams are not
// in flight either: a Watch is a subscription that never ends by itself; it
// ends when the listener closes.
//
// A call to a method no service registered goes through the interceptors
// too: every grpc.Server gets an unknown-service handler
// (grpc.UnknownServiceHandler; one in WithServerOptions replaces it) that
// answers codes.Unimplemented with grpc-go's message. So the answer carries
// the identity (WithIdentity), and the call counts as an arrival and, while
// answered, as a stream.
//
// Draining(ctx) finds the drain signal from a call's context without any
// allocation per call: grpcdrain reports each connection's local address as
// an *Addr, which carries it, and grpc-go puts that address in every call's
// peer.Peer. Code that type-asserts peer.Peer.LocalAddr must unwrap the
// *Addr first (its embedded net.Addr).
//
// # What grpcdrain does not do
//
// It serves one listener per Server (use one Server per listener); the
// listener may be plain TCP or any other stream listener, and TLS is set up
// with grpc.Creds in WithServerOptions. grpc.Server.ServeHTTP (gRPC
// through net/http) is out of scope: drain such a server with httpdrain. A
// handler that ignores both Draining and its context's cancellation keeps
// running after ForceClose; Serve stops waiting for it 2s later.
package grpcdrain
