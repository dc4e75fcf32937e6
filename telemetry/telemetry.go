package telemetry

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/drainkit/drainkit/lifecycle"
)

// ScopeName is the instrumentation scope of drainkit's meter and tracer.
const ScopeName = "github.com/drainkit/drainkit/telemetry"

// Options configure New. The zero value uses the global providers.
type Options struct {
	// MeterProvider creates the instruments; nil means otel.GetMeterProvider()
	// (which follows a later otel.SetMeterProvider).
	MeterProvider metric.MeterProvider
	// TracerProvider creates the drain spans; nil means
	// otel.GetTracerProvider().
	TracerProvider trace.TracerProvider
}

// Telemetry observes one lifecycle and exports it (see the package
// documentation for the instruments, the span and the flush). Create it with
// New and pass it to lifecycle.New in Options.Observers (or to drainkit.Main
// with drainkit.WithObserver): that one option attaches the new Lifecycle
// to it, which also registers its flush as the Lifecycle's last stop hook.
// Its methods are safe for concurrent use. One Telemetry observes one
// Lifecycle: attaching a second one is an error.
type Telemetry struct {
	opts   Options
	tracer trace.Tracer
	inst   instruments
	reg    metric.Registration

	state atomic.Int32 // lifecycle.State from the last transition observed
	lc    atomic.Pointer[lifecycle.Lifecycle]

	mu      sync.Mutex
	drain   *drainSpan         // the open drain span, nil if none
	emitted int                // steps of the current drain already handled
	ended   bool               // the flush recorded the phases that end with the drain
	last    lifecycle.Timeline // the most complete timeline observed (zero: none yet)
}

// New creates the instruments and registers the collection callback with the
// meter provider of opts. It returns an error if an instrument cannot be
// created or the callback cannot be registered (the API's no-op provider
// never fails). Call Close to unregister the callback.
func New(opts Options) (*Telemetry, error) {
	if opts.MeterProvider == nil {
		opts.MeterProvider = otel.GetMeterProvider()
	}
	if opts.TracerProvider == nil {
		opts.TracerProvider = otel.GetTracerProvider()
	}
	t := &Telemetry{
		opts:   opts,
		tracer: opts.TracerProvider.Tracer(ScopeName),
	}
	meter := opts.MeterProvider.Meter(ScopeName)
	inst, err := newInstruments(meter)
	if err != nil {
		return nil, err
	}
	t.inst = inst
	t.reg, err = meter.RegisterCallback(t.observe, inst.observables()...)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Attach is called by lifecycle.New with the Lifecycle this Telemetry
// observes (Options.Observers), before New returns it; there is no need to
// call it by hand. It lets the observable instruments read lc at collection
// time (its state, the drain's late and forced counts, its servers'
// in-flight work) and adds the flush as lc's first stop hook, named
// "telemetry": stop hooks run in reverse order, so the flush runs after
// every other one, within stop.timeout (see the package documentation). It
// returns an error for a nil lc or when another Lifecycle was attached.
func (t *Telemetry) Attach(lc *lifecycle.Lifecycle) error {
	if lc == nil {
		return errors.New("telemetry: Attach(nil)")
	}
	if !t.lc.CompareAndSwap(nil, lc) {
		return errors.New("telemetry: already attached to a Lifecycle; use one Telemetry per Lifecycle")
	}
	lc.OnStop("telemetry", t.flush)
	return nil
}

// Close unregisters the collection callback; the instruments stop reporting
// observed values. It does not shut the providers down, which the caller
// owns.
func (t *Telemetry) Close() error {
	return t.reg.Unregister()
}

// flush is the stop hook Attach adds, the last stop hook to run. It ends
// the drain span at once, every other stop hook having returned, records
// the phases that end with the drain (PhaseStopHooks and PhaseTotal,
// measured to now), then calls ForceFlush on the tracer and meter providers
// that have one (the SDK's do), within ctx, and returns their errors
// joined. What follows it (the step stop_hooks_done and the transition to
// STOPPED) reaches pull exporters only.
func (t *Telemetry) flush(ctx context.Context) error {
	now := time.Now()
	t.mu.Lock()
	if tl, drained := t.lc.Load().Timeline(); drained {
		t.record(tl) // steps whose observer call has yet to come
		if !t.ended {
			t.ended = true
			for _, p := range endPhases(tl.Steps, now.Sub(tl.Start)) {
				t.inst.duration.Record(context.Background(), p.d.Seconds(), metric.WithAttributeSet(phaseAttrs[p.name]))
			}
		}
		if t.drain != nil {
			t.drain.flushed(now, tl)
			t.drain = nil
		}
	}
	t.mu.Unlock()
	type flusher interface{ ForceFlush(context.Context) error }
	var errs []error
	for _, p := range []any{t.opts.TracerProvider, t.opts.MeterProvider} {
		if f, ok := p.(flusher); ok {
			errs = append(errs, f.ForceFlush(ctx))
		}
	}
	return errors.Join(errs...)
}

// OnTransition implements lifecycle.Observer: it counts the transition,
// remembers the state, starts the drain span on DRAINING and ends it on
// STOPPED if the flush has not (the grace period ran out and the stop hooks
// were skipped, or the Telemetry was not attached).
func (t *Telemetry) OnTransition(tr lifecycle.Transition) {
	t.state.Store(int32(tr.To))
	t.inst.transitions.Add(context.Background(), 1, metric.WithAttributeSet(transitionAttrs(tr)))
	t.mu.Lock()
	defer t.mu.Unlock()
	switch tr.To {
	case lifecycle.Draining:
		if t.drain == nil {
			t.drain = startDrainSpan(t.tracer, tr)
			t.emitted, t.ended = 0, false
		}
		t.drain.transition(tr)
	case lifecycle.Stopped:
		if t.drain != nil {
			t.drain.transition(tr)
			t.drain.end(tr.At, t.finalTimeline())
			t.drain = nil
		}
	}
}

// OnDrainStep implements lifecycle.Observer: it adds the steps not yet seen
// as span events, in timeline order (steps recorded concurrently may be
// observed out of order; the timeline snapshot is not), and records each
// phase's duration.
func (t *Telemetry) OnDrainStep(tl lifecycle.Timeline, _ lifecycle.Step) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.record(tl)
}

// record handles the steps of tl not yet seen. t.mu is held.
func (t *Telemetry) record(tl lifecycle.Timeline) {
	if len(tl.Steps) >= len(t.last.Steps) { // the zero last has no steps: the first is kept
		t.last = tl
	}
	for ; t.emitted < len(tl.Steps); t.emitted++ {
		if t.drain != nil { // nil once ended: flushed, or grace period exceeded
			t.drain.step(tl, t.emitted)
		}
		if t.ended {
			continue // the flush recorded the phases of the drain's end
		}
		for _, p := range phasesAt(tl.Steps, t.emitted) {
			t.inst.duration.Record(context.Background(), p.d.Seconds(), metric.WithAttributeSet(phaseAttrs[p.name]))
		}
	}
}

// finalTimeline is the freshest timeline: the lifecycle's when attached, else
// the last one observed. t.mu is held.
func (t *Telemetry) finalTimeline() lifecycle.Timeline {
	if lc := t.lc.Load(); lc != nil {
		if tl, ok := lc.Timeline(); ok {
			return tl
		}
	}
	return t.last
}

// currentState is the lifecycle's state when attached, else the last
// transition's.
func (t *Telemetry) currentState() lifecycle.State {
	if lc := t.lc.Load(); lc != nil {
		return lc.State()
	}
	return lifecycle.State(t.state.Load())
}
