package consumer

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Instrument names of a Transport's metrics (DESIGN.md section 7): every one
// carries drainkit.service; see Options.MeterProvider.
const (
	MetricRequests        = "drainkit.consumer.requests"         // by drainkit.consumer.outcome, drainkit.consumer.stage, error.type
	MetricAttemptFailures = "drainkit.consumer.attempt_failures" // by drainkit.consumer.stage, error.type, server.address, server.port
	MetricRetries         = "drainkit.consumer.retries"
	MetricBudgetDenials   = "drainkit.consumer.retry_budget.denials"
	MetricEjections       = "drainkit.consumer.ejections"          // by server.address, server.port, drainkit.zone
	MetricPanicEntries    = "drainkit.consumer.panic_mode.entries" // by drainkit.zone
	MetricPanicMode       = "drainkit.consumer.panic_mode"         // 1 while in panic mode
	MetricEjected         = "drainkit.consumer.ejected"
	MetricViewAge         = "drainkit.consumer.view.age" // s
	MetricViewRevision    = "drainkit.consumer.view.revision"
	MetricViewEpoch       = "drainkit.consumer.view.epoch"
	MetricViewInstances   = "drainkit.consumer.view.instances"
)

// Stages: where a call or an attempt ended (attribute drainkit.consumer.stage;
// error.type carries the same value for failures).
const (
	StageAnswered         = "answered"          // an HTTP response, any status
	StageNoInstance       = "no_instance"       // no candidate left (or none before the first view)
	StageDegraded         = "degraded"          // FailFast while degraded, or a snapshot older than MaxStaleness
	StageZoneUnavailable  = "zone_unavailable"  // Zones.Strict and nothing in the local zone
	StageConnectRefused   = "connect_refused"   // the dial failed (refused, unreachable)
	StageConnectTimeout   = "connect_timeout"   // the dial timed out
	StageIdentityMismatch = "identity_mismatch" // answered as another service
	StageResetAfterWrite  = "reset_after_write" // cut after the request was written
	StageTimeout          = "timeout"           // the caller's context ended
)

// Attribute keys of drainkit's own namespace.
const (
	attrService  = attribute.Key("drainkit.service")
	attrOutcome  = attribute.Key("drainkit.consumer.outcome")
	attrStage    = attribute.Key("drainkit.consumer.stage")
	attrZone     = attribute.Key("drainkit.zone")
	attrInstance = attribute.Key("drainkit.instance.id")
	attrAttempt  = attribute.Key("drainkit.consumer.attempt")
	attrProbe    = attribute.Key("drainkit.consumer.probe")
	attrRevision = attribute.Key("drainkit.view.revision")
	attrEpoch    = attribute.Key("drainkit.view.epoch")
	attrSource   = attribute.Key("drainkit.view.source")
)

// stageOf classifies err, the error of a call or an attempt of req.
func stageOf(req *http.Request, err error) string {
	var ne net.Error
	switch {
	case err == nil:
		return StageAnswered
	case errors.Is(err, ErrWrongService):
		return StageIdentityMismatch
	case errors.Is(err, ErrZoneUnavailable):
		return StageZoneUnavailable
	case errors.Is(err, ErrDegraded):
		return StageDegraded
	case notWritten(err):
		if errors.As(err, &ne) && ne.Timeout() {
			return StageConnectTimeout
		}
		return StageConnectRefused
	case req.Context().Err() != nil:
		return StageTimeout
	case errors.Is(err, ErrNoInstance):
		return StageNoInstance
	}
	return StageResetAfterWrite
}

// telemetry is a Transport's OpenTelemetry instruments; nil without a
// MeterProvider and a TracerProvider, so that the request path then pays
// one nil check.
type telemetry struct {
	t       *Transport
	tracer  trace.Tracer // nil without a TracerProvider
	service attribute.KeyValue

	requests, attemptFails, retries, denials, ejections, panics metric.Int64Counter // nil without a MeterProvider
	reg                                                         metric.Registration
}

// newTelemetry returns t's instruments, or nil when t has no provider.
func newTelemetry(t *Transport) (*telemetry, error) {
	o := t.opts
	if o.MeterProvider == nil && o.TracerProvider == nil {
		return nil, nil
	}
	tel := &telemetry{t: t, service: attrService.String(t.registryService)}
	const scope = "github.com/drainkit/drainkit/consumer"
	if o.TracerProvider != nil {
		tel.tracer = o.TracerProvider.Tracer(scope)
	}
	if o.MeterProvider == nil {
		return tel, nil
	}
	m := o.MeterProvider.Meter(scope)
	var errs []error
	counter := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	tel.requests = counter(MetricRequests, "{request}", "Calls through the Transport, by outcome and the stage where they ended")
	tel.attemptFails = counter(MetricAttemptFailures, "{attempt}", "Failed attempts, by stage and instance address")
	tel.retries = counter(MetricRetries, "{retry}", "Attempts after a call's first")
	tel.denials = counter(MetricBudgetDenials, "{retry}", "Retries the retry budget refused")
	tel.ejections = counter(MetricEjections, "{ejection}", "Local outlier ejections, by instance address and zone")
	tel.panics = counter(MetricPanicEntries, "{entry}", "Times panic mode began")
	gauge := func(name, unit, desc string) metric.Int64ObservableGauge {
		g, err := m.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return g
	}
	panicMode := gauge(MetricPanicMode, "1", "1 while in panic mode (an ejection refused by the cap)")
	ejected := gauge(MetricEjected, "{instance}", "Candidate instances ejected or being probed")
	revision := gauge(MetricViewRevision, "{revision}", "The candidate view's registry revision")
	epoch := gauge(MetricViewEpoch, "{epoch}", "The candidate view's epoch")
	instances := gauge(MetricViewInstances, "{instance}", "Candidate instances in the view")
	age, err := m.Float64ObservableGauge(MetricViewAge, metric.WithUnit("s"), metric.WithDescription("Age of the candidate view's evidence"))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	tel.reg, err = m.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
		s := t.Status()
		set := metric.WithAttributes(tel.service, attrSource.String(s.Source))
		obs.ObserveInt64(panicMode, boolInt(s.PanicMode), set)
		obs.ObserveInt64(ejected, int64(s.Ejected), set)
		obs.ObserveInt64(revision, int64(s.Revision), set)
		obs.ObserveInt64(epoch, int64(s.Epoch), set)
		obs.ObserveInt64(instances, int64(s.Instances), set)
		obs.ObserveFloat64(age, s.Age.Seconds(), set)
		return nil
	}, panicMode, ejected, revision, epoch, instances, age)
	return tel, err
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// close unregisters the observable instruments.
func (tel *telemetry) close() {
	if tel != nil && tel.reg != nil {
		tel.reg.Unregister()
	}
}

// roundTrip is RoundTrip with telemetry: a span over the whole call (events
// per attempt), the call's count by outcome and stage.
func (tel *telemetry) roundTrip(req *http.Request) (*http.Response, error) {
	c := call{tel: tel}
	if tel.tracer != nil {
		v := tel.t.w.View()
		ctx, span := tel.tracer.Start(req.Context(), req.Method+" "+tel.t.service, trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("http.request.method", req.Method), tel.service,
				attrRevision.Int64(int64(v.Revision)), attrEpoch.Int64(int64(v.Epoch)), attrSource.String(v.Source)))
		req, c.span = req.WithContext(ctx), span
		defer span.End()
	}
	resp, err := tel.t.roundTrip(req, &c)
	stage := stageOf(req, err)
	attrs := []attribute.KeyValue{tel.service, attrOutcome.String(outcome(err)), attrStage.String(stage)}
	if err != nil {
		attrs = append(attrs, attribute.String("error.type", stage))
	}
	if tel.requests != nil {
		tel.requests.Add(req.Context(), 1, metric.WithAttributes(attrs...))
	}
	if c.span != nil {
		c.span.SetAttributes(attrs[1:]...)
		if err != nil {
			c.span.SetStatus(codes.Error, err.Error())
		}
	}
	return resp, err
}

func outcome(err error) string {
	if err == nil {
		return "answered"
	}
	return "failed"
}

// call is one call's telemetry; a nil *call records nothing (no
// telemetry), so the request path pays a nil check.
type call struct {
	tel  *telemetry
	span trace.Span // nil without tracing
}

// picked records the attempt number n (from 1) going to ep.
func (c *call) picked(ep *endpoint, n int, probe bool) {
	if c == nil {
		return
	}
	if n > 1 && c.tel.retries != nil {
		c.tel.retries.Add(context.Background(), 1, metric.WithAttributes(c.tel.service))
	}
	if c.span != nil {
		host, port := ep.hostPort()
		c.span.AddEvent("drainkit.consumer.pick", trace.WithAttributes(attrAttempt.Int(n), attrInstance.String(ep.id),
			attribute.String("server.address", host), attribute.Int("server.port", port), attrZone.String(ep.zone), attrProbe.Bool(probe)))
	}
}

// failed records a failed attempt of req on ep.
func (c *call) failed(req *http.Request, ep *endpoint, err error) {
	if c == nil {
		return
	}
	stage := stageOf(req, err)
	host, port := ep.hostPort()
	attrs := []attribute.KeyValue{attrStage.String(stage), attribute.String("error.type", stage),
		attribute.String("server.address", host), attribute.Int("server.port", port)}
	if c.tel.attemptFails != nil {
		c.tel.attemptFails.Add(req.Context(), 1, metric.WithAttributes(append(attrs, c.tel.service)...))
	}
	if c.span != nil {
		c.span.AddEvent("drainkit.consumer.attempt_failed", trace.WithAttributes(append(attrs, attribute.String("exception.message", err.Error()))...))
	}
}

// denied records a retry the budget refused.
func (c *call) denied() {
	if c != nil && c.tel.denials != nil {
		c.tel.denials.Add(context.Background(), 1, metric.WithAttributes(c.tel.service))
	}
}

// ejected records an ejection of ep (t.mu held; no call context).
func (tel *telemetry) ejected(ep *endpoint) {
	if tel == nil || tel.ejections == nil {
		return
	}
	host, port := ep.hostPort()
	tel.ejections.Add(context.Background(), 1, metric.WithAttributes(tel.service,
		attribute.String("server.address", host), attribute.Int("server.port", port), attrZone.String(ep.zone)))
}

// panicked records the start of panic mode, by the zone of the instance
// whose ejection the cap refused.
func (tel *telemetry) panicked(zone string) {
	if tel != nil && tel.panics != nil {
		tel.panics.Add(context.Background(), 1, metric.WithAttributes(tel.service, attrZone.String(zone)))
	}
}

// hostPort splits the endpoint's address for server.address and server.port.
func (ep *endpoint) hostPort() (string, int) {
	host, p, _ := net.SplitHostPort(ep.addr)
	port, _ := strconv.Atoi(p)
	return host, port
}
