// Package telemetry exports a drainkit lifecycle through OpenTelemetry:
// metrics named by DESIGN.md section 7, one span per drain, and an optional
// Prometheus endpoint for the admin listener.
//
// A Telemetry is a lifecycle.Observer, and passing it as one is the whole
// wiring: lifecycle.New attaches the new lifecycle to it, so that the
// observable instruments read it, and its flush becomes the lifecycle's last
// stop hook (see Flushing):
//
//	tel, err := telemetry.New(telemetry.Options{}) // global providers
//	...
//	lc, err := lifecycle.New(lifecycle.Options{Observers: []lifecycle.Observer{tel}})
//	...
//	os.Exit(lifecycle.ExitCode(lc.Run(ctx))) // the drain span and metrics were flushed
//
// With the entry point, drainkit.WithObserver(tel) does the same.
//
// # Metrics
//
// Instrument names, units and attributes (Prometheus names in brackets, as
// the OpenTelemetry Prometheus exporter spells them):
//
//	drainkit.lifecycle.state        gauge, {state}: 1 for the current state, 0 for the others;
//	                                attribute state=STARTING|READY|EJECTED|DRAINING|STOPPED
//	                                [drainkit_lifecycle_state]
//	drainkit.lifecycle.transitions  counter, {transition}; attributes from, to, cause
//	                                [drainkit_lifecycle_transitions_total]
//	drainkit.drain.duration         histogram, s; attribute phase (see the Phase constants),
//	                                one observation per phase per drain
//	                                [drainkit_drain_duration_seconds_{bucket,sum,count}]
//	drainkit.drain.late_requests    counter, {request}: requests that arrived after the drain's
//	                                start (Timeline.LateArrivals) [drainkit_drain_late_requests_total]
//	drainkit.drain.forced_closes    counter, {request}: requests, calls, streams and hijacked
//	                                connections cut at drain.timeout (Timeline.ForceClosed)
//	                                [drainkit_drain_forced_closes_total]
//	http.server.active_requests     updowncounter, {request}: in-flight HTTP requests of the
//	                                lifecycle's servers (semantic convention; no attributes,
//	                                since the lifecycle does not know methods or schemes)
//	                                [http_server_active_requests]
//	drainkit.server.in_flight       gauge, {item}: in-flight work by kind=requests|calls|streams|hijacked,
//	                                covering gRPC calls, streams and hijacked connections, which
//	                                have no semantic-convention metric [drainkit_server_in_flight]
//	drainkit.registrar.failing      gauge, {registrar}: 1 while a registrar's last operation (a
//	                                sync or the deregistration) failed, 0 after one succeeded;
//	                                attribute registrar (no sample before its first operation)
//	                                [drainkit_registrar_failing]
//
// The state, the late and forced counts, the in-flight work and the
// registrars' outcomes (lifecycle.Status's Registry) are observed at
// collection time from the lifecycle (Attach); nothing is added to the request
// path. Without Attach, the state and the drain counts come from the events
// the Telemetry observed, and the in-flight instruments report nothing.
//
// # Traces
//
// Each drain is one span, "drainkit.drain", from the drain's start (t0) to
// the flush (below), when every other stop hook has returned. Every timeline
// step until then is a span event named after the step (not_ready,
// deregistered, ..., idle or force_closed) at t0 plus its offset, in
// timeline order; the transition into DRAINING is an event named
// "transition", and the last event, "telemetry.flush", marks the span's
// end. The span's status is Error when something was force-closed. If the
// grace period ran out, the stop hooks, the flush among them, are skipped:
// the span then ends at the transition to STOPPED with status Error, and
// leaves the process only if the providers export it on their own before
// the process exits.
//
// # Flushing
//
// Attach adds the flush as the lifecycle's first stop hook, so it runs last
// (stop hooks run in reverse order), within stop.timeout and so inside the
// grace period that `drainkit check` compares with Kubernetes'. It ends the
// drain span, records the phases stop_hooks and total (measured to the
// flush's start), then calls ForceFlush on the providers that have one. What
// happens after it, the step stop_hooks_done and the transition to STOPPED,
// reaches only pull exporters (Prometheus) scraped before the process exits:
// the last state a push exporter reports is DRAINING. Leave the flush room
// in stop.timeout: an exporter's round trip after the other stop hooks. Do
// not shut the providers down in a stop hook of your own (it would run
// before the flush); the process exit ends them.
//
// Out of scope: creating exporters other than Prometheus (configure an
// OTLP exporter on your providers), per-request metrics and spans (use
// otelhttp or otelgrpc), and log export (the lifecycle logs through log/slog).
package telemetry
