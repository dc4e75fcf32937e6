package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/semconv/v1.40.0/httpconv"

	"github.com/drainkit/drainkit/lifecycle"
)

// Instrument names (DESIGN.md section 7).
const (
	MetricState          = "drainkit.lifecycle.state"
	MetricTransitions    = "drainkit.lifecycle.transitions"
	MetricDrainDuration  = "drainkit.drain.duration"
	MetricLateRequests   = "drainkit.drain.late_requests"
	MetricForcedCloses   = "drainkit.drain.forced_closes"
	MetricActiveRequests = "http.server.active_requests"
	MetricInFlight       = "drainkit.server.in_flight"
	// MetricRegistrarFailing is 1 for a registrar whose last operation
	// (a sync or the deregistration) failed, 0 once one succeeded.
	MetricRegistrarFailing = "drainkit.registrar.failing"
)

// durationBuckets (seconds) resolve drain phases from milliseconds to a
// minute.
var durationBuckets = []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 5, 8, 10, 15, 20, 30, 60}

type instruments struct {
	state       metric.Int64ObservableGauge
	transitions metric.Int64Counter
	duration    metric.Float64Histogram
	late        metric.Int64ObservableCounter
	forced      metric.Int64ObservableCounter
	active      metric.Int64ObservableUpDownCounter
	inFlight    metric.Int64ObservableGauge
	registrar   metric.Int64ObservableGauge
}

func newInstruments(m metric.Meter) (instruments, error) {
	var i instruments
	// One call per instrument: each has its own metric type, name, unit
	// and description.
	var err, e error
	keep := func(e error) {
		if err == nil {
			err = e
		}
	}
	i.state, e = m.Int64ObservableGauge(MetricState, metric.WithUnit("{state}"),
		metric.WithDescription("1 for the lifecycle's current state (attribute state), 0 for the others"))
	keep(e)
	i.transitions, e = m.Int64Counter(MetricTransitions, metric.WithUnit("{transition}"),
		metric.WithDescription("Lifecycle state transitions, by from, to and cause"))
	keep(e)
	i.duration, e = m.Float64Histogram(MetricDrainDuration, metric.WithUnit("s"),
		metric.WithDescription("Duration of each phase of a drain (attribute phase)"),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	keep(e)
	i.late, e = m.Int64ObservableCounter(MetricLateRequests, metric.WithUnit("{request}"),
		metric.WithDescription("Requests, calls and streams that arrived after the drain started"))
	keep(e)
	i.forced, e = m.Int64ObservableCounter(MetricForcedCloses, metric.WithUnit("{request}"),
		metric.WithDescription("Requests, calls, streams and hijacked connections force-closed at drain.timeout"))
	keep(e)
	active := httpconv.ServerActiveRequests{}
	i.active, e = m.Int64ObservableUpDownCounter(active.Name(), metric.WithUnit(active.Unit()),
		metric.WithDescription(active.Description()))
	keep(e)
	i.inFlight, e = m.Int64ObservableGauge(MetricInFlight, metric.WithUnit("{item}"),
		metric.WithDescription("In-flight work of the lifecycle's servers by kind: requests, calls, streams, hijacked"))
	keep(e)
	i.registrar, e = m.Int64ObservableGauge(MetricRegistrarFailing, metric.WithUnit("{registrar}"),
		metric.WithDescription("1 while a registrar's last operation (a sync or the deregistration) failed, 0 after one succeeded; attribute registrar"))
	keep(e)
	return i, err
}

func (i instruments) observables() []metric.Observable {
	return []metric.Observable{i.state, i.late, i.forced, i.active, i.inFlight, i.registrar}
}

// Attribute sets, built once.
var (
	states     = []lifecycle.State{lifecycle.Starting, lifecycle.Ready, lifecycle.Ejected, lifecycle.Draining, lifecycle.Stopped}
	stateAttrs = func() map[lifecycle.State]attribute.Set {
		m := map[lifecycle.State]attribute.Set{}
		for _, s := range states {
			m[s] = attribute.NewSet(attribute.String("state", s.String()))
		}
		return m
	}()
	phaseAttrs = func() map[string]attribute.Set {
		m := map[string]attribute.Set{}
		for _, p := range []string{PhaseDeregister, PhaseConfirm, PhasePropagation, PhaseCloseListeners, PhaseInFlight, PhaseStopHooks, PhaseTotal} {
			m[p] = attribute.NewSet(attribute.String("phase", p))
		}
		return m
	}()
	kindAttrs = [5]attribute.Set{
		attribute.NewSet(attribute.String("kind", "requests")),
		attribute.NewSet(attribute.String("kind", "calls")),
		attribute.NewSet(attribute.String("kind", "streams")),
		attribute.NewSet(attribute.String("kind", "hijacked")),
		attribute.NewSet(attribute.String("kind", "work")),
	}
)

func transitionAttrs(tr lifecycle.Transition) attribute.Set {
	return attribute.NewSet(
		attribute.String("from", tr.From.String()),
		attribute.String("to", tr.To.String()),
		attribute.String("cause", string(tr.Cause)),
	)
}

// observe is the collection callback of the observable instruments.
func (t *Telemetry) observe(_ context.Context, o metric.Observer) error {
	cur := t.currentState()
	for _, s := range states {
		var v int64
		if s == cur {
			v = 1
		}
		o.ObserveInt64(t.inst.state, v, metric.WithAttributeSet(stateAttrs[s]))
	}
	lc := t.lc.Load()
	var tl lifecycle.Timeline
	if lc != nil {
		tl, _ = lc.Timeline()
	} else {
		t.mu.Lock()
		tl = t.last
		t.mu.Unlock()
	}
	o.ObserveInt64(t.inst.late, tl.LateArrivals)
	o.ObserveInt64(t.inst.forced, int64(tl.ForceClosed))
	if lc != nil {
		st := lc.Status()
		in := st.InFlight
		o.ObserveInt64(t.inst.active, in.Requests)
		for k, v := range [5]int64{in.Requests, in.Calls, in.Streams, in.Hijacked, in.Work} {
			o.ObserveInt64(t.inst.inFlight, v, metric.WithAttributeSet(kindAttrs[k]))
		}
		for _, r := range st.Registry {
			if r.LastOp == "" {
				continue // nothing tried yet: neither failing nor healthy
			}
			var v int64
			if r.Err != "" {
				v = 1
			}
			o.ObserveInt64(t.inst.registrar, v, metric.WithAttributes(attribute.String("registrar", r.Name)))
		}
	}
	return nil
}
