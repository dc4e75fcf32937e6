// Package telemetry exports a drainkit lifecycle through OpenTelemetry:
// metrics named by DESIGN.md section 7, one span per drain, and an optional
// Prometheus endpoint for the admin listener.
//
// A Telemetry is a lifecycle.Observer. Build it first and pass it to
// lifecycle.New with lifecycle.WithObserver, which also attaches the new
// lifecycle to it so that the observable instruments read it:
//
//	func run() int { // main: os.Exit(run()), so that the deferred Close runs
//		tel, err := telemetry.New(telemetry.Options{}) // global providers
//		...
//		defer tel.Close()
//		lc, err := lifecycle.New(lifecycle.WithObserver(tel), ...)
//		err = lc.Run(ctx)
//		tel.Flush(flushCtx) // after Run: the drain span is complete
//		return lifecycle.ExitCode(err)
//	}
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
//
// The state, the late and forced counts and the in-flight work are observed at
// collection time from the lifecycle (Attach); nothing is added to the request
// path. Without Attach, the state and the drain counts come from the events
// the Telemetry observed, and the in-flight instruments report nothing.
//
// # Traces
//
// Each drain is one span, "drainkit.drain", from the drain's start (t0) to
// the transition to STOPPED, which follows the last step
// (lifecycle.StepStopHooksDone) at once, or cuts the drain short when the
// grace period ran out. Every timeline step is a span event named after the
// step (not_ready, deregistered, ..., stop_hooks_done) at t0 plus its
// offset, in timeline order; the transitions into DRAINING and STOPPED are
// events named "transition". The span's status is Error when something was
// force-closed or the grace period ran out.
//
// Flushing: stop hooks run before the last step, so a stop hook that flushes
// or shuts down the providers runs while the drain span is still open. Call
// Flush after lifecycle.Lifecycle.Run returns instead; if Flush does run
// earlier, it ends the span at once, marked drainkit.drain.truncated=true, so
// that it is exported at all.
//
// Out of scope: creating exporters other than Prometheus (configure an
// OTLP exporter on your providers), per-request metrics and spans (use
// otelhttp or otelgrpc), and log export (the lifecycle logs through log/slog).
package telemetry
