package consumer

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Balancing chooses how a Transport picks an instance per request.
type Balancing int

const (
	// RoundRobin takes the candidates in turn (the default).
	RoundRobin Balancing = iota
	// LeastRequest picks the one with fewer requests in flight out of two
	// random candidates (power of two choices).
	LeastRequest
)

// WrittenRetry says which requests that failed after some of them was
// written are retried. Requests that failed before any byte was written are
// retried whatever this says.
type WrittenRetry int

const (
	// RetryIdempotent retries idempotent requests: GET, HEAD, OPTIONS,
	// TRACE, PUT and DELETE, requests with an Idempotency-Key or
	// X-Idempotency-Key header, and requests whose context was marked with
	// WithIdempotent. The default.
	RetryIdempotent WrittenRetry = iota
	// RetryNotWritten never retries a request that was written.
	RetryNotWritten
)

// RetryBudget bounds retries so that an outage never multiplies load: over a
// sliding window of about 10s, retries may not exceed Percent of the
// requests plus MinPerSecond per second.
type RetryBudget struct {
	// Percent is the share of requests that may be retried, 0-100. 0 means
	// 20; negative means none beyond MinPerSecond.
	Percent float64
	// MinPerSecond is the floor of retries per second, for services with
	// little traffic. 0 means 10; negative means none.
	MinPerSecond float64
}

// OutlierDetection configures passive, local outlier ejection: after
// Consecutive connect-level failures in a row (no HTTP response: dial
// refused or timed out, connection reset, cut mid-response) an instance is
// ejected for BaseEjectionTime times the number of times it was ejected
// (capped at MaxEjectionTime); then one real request probes it (half-open)
// and decides: success restores it, failure ejects it again for longer.
// An instance is ejected only while less than MaxEjectionPercent of the
// candidates are ejected (Envoy's rule: with 50 %, 2 of 4 and 2 of 3);
// beyond that ejection stops and the Transport reports panic mode. A probe
// that fails in panic mode (every instance failing alike says nothing
// against this one) ejects again without a longer time, and the ejections
// made during panic mode end when it does, each instance then probed at its
// next pick. An ejected instance's share is spread evenly over the healthy
// ones (not given to its neighbour in the round robin). Ejection never
// writes to the registry. Ejection times run on the monotonic clock: a step
// of the wall clock (NTP) neither shortens nor lengthens them.
type OutlierDetection struct {
	// Consecutive failures that eject. 0 means 3; negative disables ejection.
	Consecutive int
	// BaseEjectionTime; 0 means 5s.
	BaseEjectionTime time.Duration
	// MaxEjectionTime caps an ejection; 0 means 5m.
	MaxEjectionTime time.Duration
	// MaxEjectionPercent of the candidates ejected at once, 1-100; 0 means 50.
	MaxEjectionPercent int
}

// SlowStart ramps the share of an instance that became READY recently
// (registry.Instance.ReadyAt: drainkit's registrars publish the latest READY
// under registry.MetaReadyAt, so an instance restored after EJECTED ramps
// again), like Envoy's slow_start_config: during Window its
// weight grows from MinWeightPercent to 100 % as (elapsed/Window)^(1/Aggression).
// It is off when more than half of the candidates are in their window (a
// fresh deployment) and for instances without a READY time.
//
// The READY time is the provider's wall clock, compared with this host's
// once, when the consumer first sees it; the ramp then runs on the
// monotonic clock. Clock skew between the hosts shifts the ramp by as much:
// a provider whose clock is behind by d ramps d shorter (not at all once d
// reaches Window), one ahead by d ramps up to d longer, but a READY time in
// the future counts as the moment it was first seen (logged when more than
// 1s ahead), so no ramp lasts longer than Window from then. A READY time
// older than Window, however absurd (a clock reset to 1970), means no ramp.
// With NTP on both hosts the skew is milliseconds against a Window of
// seconds.
type SlowStart struct {
	// Window; 0 disables slow start.
	Window time.Duration
	// MinWeightPercent is the weight at the start, 1-100; 0 means 10.
	MinWeightPercent float64
	// Aggression shapes the ramp (1 is linear); 0 means 1.
	Aggression float64
}

// Options configure a Transport. The zero value is ready to use.
type Options struct {
	// Base is cloned once per instance (each instance has its own pool of
	// connections, so that leaving the view closes exactly its idle ones).
	// nil means a clone of http.DefaultTransport without proxy, with
	// MaxIdleConnsPerHost 64. Its DialContext, if set, is used.
	Base *http.Transport
	// Scheme selects the endpoint requests go to among an instance's
	// registry.Instance.Endpoints (one registration per instance: a process
	// serving HTTP and gRPC lists both); "" means "http". An instance whose
	// endpoints lack the scheme (a gRPC-only process) is left out; one that
	// lists no endpoints is used at its Address and Port. The requests' own
	// URL scheme is kept: set "https" for requests to https://<service>/.
	Scheme string
	// Balancing picks instances; the zero value is RoundRobin.
	Balancing Balancing
	// WrittenRetry; the zero value retries idempotent requests.
	WrittenRetry WrittenRetry
	// MaxAttempts is the most tries of one request, first included; 0 means 3.
	MaxAttempts int
	Budget      RetryBudget
	Outlier     OutlierDetection
	SlowStart   SlowStart
	// Zones configures zone-aware picking; the zero value is off.
	Zones Zones
	// FailFast makes requests fail at once with ErrDegraded while the
	// watcher is degraded, instead of using the stale view.
	FailFast bool
	// MeterProvider and TracerProvider, when set, receive the Transport's
	// metrics and spans through the OpenTelemetry API (the program brings
	// the SDK); nil means none, and then the request path does no telemetry
	// work at all (not even the global providers'). Metrics, each with
	// drainkit.service: MetricRequests by drainkit.consumer.outcome
	// (answered, failed) and drainkit.consumer.stage (Stage*, also as
	// error.type for failures), MetricAttemptFailures by stage and
	// server.address/server.port, MetricRetries, MetricBudgetDenials,
	// MetricEjections by instance address and drainkit.zone,
	// MetricPanicEntries, and gauges MetricPanicMode, MetricEjected and the
	// candidate view's MetricViewAge (s), MetricViewRevision,
	// MetricViewEpoch and MetricViewInstances (with drainkit.view.source).
	// Spans: one client span per call, "<method> <service>", with the
	// view's revision, epoch and source, an event per attempt
	// (drainkit.consumer.pick: instance ID, server.address, server.port,
	// zone, attempt, probe; drainkit.consumer.attempt_failed: stage,
	// error.type), and the call's outcome and stage; the attempts'
	// requests carry its context, so a base transport instrumented with
	// otelhttp nests under it.
	MeterProvider  metric.MeterProvider
	TracerProvider trace.TracerProvider
	// Logger receives ejections, restorations and panic mode. nil means
	// slog.Default().
	Logger *slog.Logger
	// Name is the consumer's identity, sent on every request in the header
	// registry.ConsumerHeader (unless the request sets it itself): a
	// drainkit provider's propagation window then waits for this consumer
	// by its own rate even when others share its IP, and names it in its
	// warnings and learned window (docs/DESIGN.md). "" means the program's
	// name (the base name of os.Args[0]); NoName sends none. At most 128
	// bytes of visible ASCII (no spaces, no control characters), else
	// NewTransport fails.
	Name string
}

// maxAttemptsLimit bounds MaxAttempts (the tried instances live on the stack).
const maxAttemptsLimit = 8

func (o Options) withDefaults() (Options, error) {
	if o.MaxAttempts < 0 || o.MaxAttempts > maxAttemptsLimit {
		return o, fmt.Errorf("consumer: Options.MaxAttempts %d: want 0 (default 3) to %d", o.MaxAttempts, maxAttemptsLimit)
	}
	if p := o.Outlier.MaxEjectionPercent; p < 0 || p > 100 {
		return o, fmt.Errorf("consumer: Options.Outlier.MaxEjectionPercent %d: want 0 (default 50) to 100", p)
	}
	if p := o.SlowStart.MinWeightPercent; p < 0 || p > 100 {
		return o, fmt.Errorf("consumer: Options.SlowStart.MinWeightPercent %v: want 0 (default 10) to 100", p)
	}
	if o.Budget.Percent > 100 {
		return o, fmt.Errorf("consumer: Options.Budget.Percent %v: want at most 100", o.Budget.Percent)
	}
	if o.SlowStart.Window < 0 || o.SlowStart.Aggression < 0 || o.Outlier.BaseEjectionTime < 0 || o.Outlier.MaxEjectionTime < 0 {
		return o, fmt.Errorf("consumer: Options: SlowStart.Window, SlowStart.Aggression, Outlier.BaseEjectionTime and Outlier.MaxEjectionTime must be >= 0")
	}
	name, err := consumerName(o.Name)
	if err != nil {
		return o, err
	}
	o.Name = name
	z, err := o.Zones.withDefaults()
	if err != nil {
		return o, err
	}
	o.Zones = z
	o.Scheme = cmpOr(o.Scheme, "http")
	o.MaxAttempts = cmpOr(o.MaxAttempts, 3)
	o.Budget.Percent = cmpOr(o.Budget.Percent, 20)
	o.Budget.MinPerSecond = cmpOr(o.Budget.MinPerSecond, 10)
	o.Outlier.Consecutive = cmpOr(o.Outlier.Consecutive, 3)
	o.Outlier.BaseEjectionTime = cmpOr(o.Outlier.BaseEjectionTime, 5*time.Second)
	o.Outlier.MaxEjectionTime = max(cmpOr(o.Outlier.MaxEjectionTime, 5*time.Minute), o.Outlier.BaseEjectionTime)
	o.Outlier.MaxEjectionPercent = cmpOr(o.Outlier.MaxEjectionPercent, 50)
	o.SlowStart.MinWeightPercent = cmpOr(o.SlowStart.MinWeightPercent, 10)
	o.SlowStart.Aggression = cmpOr(o.SlowStart.Aggression, 1)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Base == nil {
		b := http.DefaultTransport.(*http.Transport).Clone()
		b.Proxy = nil
		b.MaxIdleConnsPerHost = 64
		o.Base = b
	}
	return o, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
