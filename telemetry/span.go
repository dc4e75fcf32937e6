package telemetry

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/drainkit/drainkit/lifecycle"
)

// SpanName is the name of the span each drain produces.
const SpanName = "drainkit.drain"

// flushEvent is the drain span's last event: the flush, the last stop hook,
// began, and the span ends with it.
const flushEvent = "telemetry.flush"

// drainSpan is the span of one drain; the Telemetry's mutex guards it.
type drainSpan struct {
	span        trace.Span
	stopHooksOK bool // the stop hooks ran: StepStopHooksDone was seen, or the flush
}

func startDrainSpan(tr trace.Tracer, t lifecycle.Transition) *drainSpan {
	_, span := tr.Start(context.Background(), SpanName,
		trace.WithTimestamp(t.At),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.String("drainkit.drain.reason", t.Reason),
			attribute.String("drainkit.drain.cause", string(t.Cause)),
			attribute.String("drainkit.drain.from", t.From.String()),
		))
	return &drainSpan{span: span}
}

// transition adds a "transition" event at the transition's time.
func (d *drainSpan) transition(t lifecycle.Transition) {
	d.span.AddEvent("transition", trace.WithTimestamp(t.At), trace.WithAttributes(
		attribute.String("from", t.From.String()),
		attribute.String("to", t.To.String()),
		attribute.String("cause", string(t.Cause)),
		attribute.String("reason", t.Reason),
	))
}

// step adds tl.Steps[i] as an event at t0 plus its offset.
func (d *drainSpan) step(tl lifecycle.Timeline, i int) {
	s := tl.Steps[i]
	attrs := []attribute.KeyValue{attribute.Float64("drainkit.step.offset", s.Offset.Seconds())}
	if s.Err != "" {
		attrs = append(attrs, attribute.String("drainkit.step.error", s.Err))
	}
	d.span.AddEvent(s.Name, trace.WithTimestamp(tl.Start.Add(s.Offset)), trace.WithAttributes(attrs...))
	if s.Name == lifecycle.StepStopHooksDone {
		d.stopHooksOK = true
	}
}

// end sets the timeline's totals as attributes and ends the span at `at`.
func (d *drainSpan) end(at time.Time, tl lifecycle.Timeline) {
	d.summary(tl)
	switch {
	case tl.ForceClosed > 0:
		d.span.SetStatus(codes.Error, fmt.Sprintf("%d force-closed at drain.timeout", tl.ForceClosed))
	case !d.stopHooksOK:
		d.span.SetStatus(codes.Error, "the drain did not finish within grace_period")
	}
	d.span.End(trace.WithTimestamp(at))
}

// flushed ends the span at the flush, the last stop hook: every other stop
// hook has returned, so the drain finished within its grace period.
func (d *drainSpan) flushed(at time.Time, tl lifecycle.Timeline) {
	d.span.AddEvent(flushEvent, trace.WithTimestamp(at))
	d.stopHooksOK = true
	d.end(at, tl)
}

func (d *drainSpan) summary(tl lifecycle.Timeline) {
	d.span.SetAttributes(
		attribute.Int64("drainkit.drain.late_requests", tl.LateArrivals),
		attribute.Float64("drainkit.drain.last_late_arrival", tl.LastLateArrival.Seconds()),
		attribute.Int64("drainkit.drain.in_flight_at_close.requests", tl.InFlightAtClose.Requests),
		attribute.Int64("drainkit.drain.in_flight_at_close.calls", tl.InFlightAtClose.Calls),
		attribute.Int64("drainkit.drain.in_flight_at_close.streams", tl.InFlightAtClose.Streams),
		attribute.Int64("drainkit.drain.in_flight_at_close.hijacked", tl.InFlightAtClose.Hijacked),
		attribute.Int64("drainkit.drain.in_flight_at_close.work", tl.InFlightAtClose.Work),
		attribute.Int("drainkit.drain.forced_closes", tl.ForceClosed),
	)
}
