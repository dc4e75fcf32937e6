// Package httpdrain drains a net/http server as part of a drainkit lifecycle
// (DESIGN.md section 4), so that a rolling restart loses no request:
//
//	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
//	ln, err := net.Listen("tcp", ":8080")
//	...
//	httpdrain.Add(lc, "http", srv, ln) // or drainkit.WithHTTPServer("http", ":8080", srv)
//	return lifecycle.ExitCode(lc.Run(ctx))
//
// http.Server.Shutdown alone is not enough for that: it closes the listener at
// once, closes idle keep-alive connections while a client may be sending on
// them, drops a request whose header it reads after Shutdown began, gives
// streaming handlers no signal, neither waits for nor closes hijacked
// connections, and polls for idleness (up to 500ms late). httpdrain never
// calls it on the caller's server.
//
// # The request path
//
// New wraps srv.Handler. For each request the wrapper reports the arrival
// and its caller (the remote IP without its port, and the consumer's
// identity: the header registry.ConsumerHeader that package consumer sends,
// else the User-Agent) with
// lifecycle.ServerHooks.Arrived (after the drain's start these are the late
// arrivals that keep the propagation window open for propagation.quiet, and
// each caller keeps it open until it has moved, judged by its own rate
// before the drain) and counts the
// handler as in flight while it runs. It allocates nothing and adds a few
// nanoseconds (BenchmarkHandler). Connection state is kept per connection,
// from http.Server.ConnState and a thin wrapper around each accepted
// net.Conn, never per request.
//
// # Lame duck: the propagation window (LameDuck, at t0)
//
// The server keeps serving, also on new connections, while load balancers and
// registries learn that the instance is going away:
//
//   - HTTP/1.1: every response begun from now on carries Connection: close,
//     so its connection closes right after it and the client's next request
//     opens a new connection, which the load balancer routes elsewhere once
//     it has noticed. Upgrade requests are left alone.
//   - HTTP/2 (over TLS, and unencrypted with http.Server.Protocols): every
//     connection gets GOAWAY at t0, and connections opened later get it with
//     their first response. Clients stop opening streams on them; streams
//     they opened concurrently with the GOAWAY are refused unprocessed and
//     retried by the client (Go's client does so). net/http offers no public
//     way to send GOAWAY short of Server.Shutdown (golang/go#41418);
//     httpdrain configures net/http's own HTTP/2 server on a private shadow
//     http.Server and runs that server's Shutdown, which only sends GOAWAY.
//     If the caller set srv.TLSNextProto itself (e.g. with
//     golang.org/x/net/http2.ConfigureServer), that server is kept and its
//     connections get GOAWAY only with their next response (Connection: close).
//   - Handlers that hold a request open (server-sent events, long polls,
//     streams, WebSockets) find their drain signal with Draining.
//   - Request contexts are not cancelled.
//
// # Request contexts
//
// A service may set http.Server.BaseContext or ConnContext to a context of its
// own, often one cancelled on SIGTERM (signal.NotifyContext). net/http derives
// every request's context from it, so that signal would cancel every request
// in flight and every request of the propagation window at t0. httpdrain
// keeps such a context's values but not its cancellation
// (context.WithoutCancel): in-flight work ends on drainkit's deadline, not on
// the application's signal. At drain.timeout, ForceClose cancels the
// remaining requests with ErrForceClosed as their context's cause
// (context.Cause). A request whose context is cancelled by anything other
// than its client or that deadline is counted in the timeline
// (lifecycle.Timeline.CancelledEarly).
//
// Idle HTTP/1.1 keep-alive connections are deliberately left open during the
// window. HTTP/1.1 has no way to tell an idle client to go away: closing the
// connection races with a request the client may be sending on it at that
// moment, and a client may not retry a non-idempotent request that failed
// that way (Go's does not; golang/go#23829). A request that does come on such
// a connection during the window is served, with Connection: close. The idle
// connections are closed when the window ends, when traffic has moved away.
// Even then a connection is "idle" only while no byte of a next request has
// arrived on it: httpdrain watches reads, whereas net/http's ConnState stays
// StateIdle until the whole header has been read (see golang/go#65802). What
// no server can prevent is a request that is still in the network when the
// connection closes; the window is what makes that rare.
//
// # After the window (CloseListeners, AwaitIdle, ForceClose)
//
// CloseListeners closes the listener (new connections are refused), sends
// GOAWAY to HTTP/2 connections opened during the window and closes idle
// HTTP/1.1 connections in the background (yielding to in-flight work while
// there is any), so the drain's end does not grow with their number. A connection accepted but still without a request is
// given WithNewConnGrace (default 1s) for its first request before it is
// closed. AwaitIdle then waits until every handler has returned, every
// HTTP/1.1 response has been written out and every HTTP/2 stream has closed,
// every hijacked connection has been closed, and no connection is reading a
// request; it is woken by each completion, without polling, so it returns as
// soon as the last one ends, idle connections or not. BenchmarkQuiescence
// measures it against http.Server.Shutdown with 0, 1,000 and 10,000 idle
// keep-alive connections:
//
//	go test -run '^$' -bench Quiescence -benchtime 5x ./httpdrain
//
// In one run on this project's 2-core machine (load average about 10, other
// builds running), the median lag from the last handler's return to
// AwaitIdle's return was 0.09 ms, 0.73 ms and 0.11 ms at 0, 1,000 and 10,000
// idle connections (a lifecycle's idle step: 0.30, 0.07 and 0.10 ms),
// against 8.2 ms, 1.5 ms and 409 ms for http.Server.Shutdown. Serve, which
// also waits for the idle connections to be closed, returned 394 ms after the
// last handler with 10,000 (closing them is the kernel's work, as for
// Shutdown).
//
// If drain.timeout passes first, the lifecycle calls ForceClose: every
// connection is closed, which cancels the remaining requests' contexts, and
// the number cut (running
// handlers plus open hijacked connections) is returned and recorded in the
// timeline; Run then exits with code 1.
//
// After the drain, Serve closes HTTP/2 connections once they have been quiet
// (net/http would wait up to 1s for the client to close them after GOAWAY)
// and returns.
//
// # Long-lived requests and WebSockets
//
// A handler that streams selects on Draining(r.Context()) and ends the
// response: an SSE stream sends a last event ("event: drain") and returns,
// which tells the client to reconnect, through the load balancer, elsewhere.
// A hijacked connection is counted in InFlight.Hijacked from the Hijack until
// it is closed; the drain waits for it like for a request. A WebSocket
// handler keeps the channel from the upgrade request and, when it fires,
// sends a close frame with status 1001 (going away), waits briefly for the
// client's close frame and closes the connection. With
// github.com/gorilla/websocket, for example:
//
//	drain := httpdrain.Draining(r.Context()) // before or after Upgrade
//	conn, err := upgrader.Upgrade(w, r, nil)
//	...
//	case <-drain:
//		msg := websocket.FormatCloseMessage(websocket.CloseGoingAway, "server draining")
//		_ = conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
//		// read until the client's close frame (or a short timeout), then
//		return // after conn.Close()
//
// A hijacked connection still open at drain.timeout is closed and counted as
// cut.
//
// # What httpdrain does not do
//
// It serves one listener per Server (use one Server per listener). The
// listener must yield plain connections; TLS is configured with
// srv.TLSConfig. It does not call functions registered with
// srv.RegisterOnShutdown. The deprecated golang.org/x/net/http2/h2c package
// hijacks each connection and runs its own HTTP/2 server inside a handler:
// such a connection is one hijacked connection to httpdrain, gets no GOAWAY
// and is cut at drain.timeout unless the client closes it; use
// http.Server.Protocols with SetUnencryptedHTTP2 instead, which httpdrain
// drains fully.
package httpdrain
