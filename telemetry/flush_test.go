package telemetry_test

import (
	"context"
	"sync"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/telemetry"
)

// exported is what one metric export carried, read during Export: the
// periodic reader reuses its ResourceMetrics.
type exported struct {
	phases      map[string]float64 // drainkit.drain.duration: sum by phase
	transitions map[string]int64   // drainkit.lifecycle.transitions by "to"
	state       string             // drainkit.lifecycle.state that is 1
}

// memExporter is a push exporter that keeps each export in memory.
type memExporter struct {
	mu      sync.Mutex
	exports []exported
}

func (e *memExporter) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}

func (e *memExporter) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

func (e *memExporter) Export(_ context.Context, rm *metricdata.ResourceMetrics) error {
	x := exported{phases: map[string]float64{}, transitions: map[string]int64{}}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range data.DataPoints {
					if v, ok := p.Attributes.Value("phase"); ok && m.Name == telemetry.MetricDrainDuration {
						x.phases[v.AsString()] = p.Sum
					}
				}
			case metricdata.Sum[int64]:
				for _, p := range data.DataPoints {
					if v, ok := p.Attributes.Value("to"); ok && m.Name == telemetry.MetricTransitions {
						x.transitions[v.AsString()] += p.Value
					}
				}
			case metricdata.Gauge[int64]:
				for _, p := range data.DataPoints {
					if v, ok := p.Attributes.Value("state"); ok && m.Name == telemetry.MetricState && p.Value == 1 {
						x.state = v.AsString()
					}
				}
			}
		}
	}
	e.mu.Lock()
	e.exports = append(e.exports, x)
	e.mu.Unlock()
	return nil
}

func (e *memExporter) ForceFlush(context.Context) error { return nil }
func (e *memExporter) Shutdown(context.Context) error   { return nil }

func (e *memExporter) last() (exported, int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.exports) == 0 {
		return exported{}, 0
	}
	return e.exports[len(e.exports)-1], len(e.exports)
}

// TestFlushIsTheLastStopHook: the one option (Options.Observers) is all the
// wiring. With exporters that push only when flushed (an hour's interval),
// the drain span and the drain's metrics have left the process when Run
// returns, flushed by the last stop hook, after the application's own stop
// hook and within stop.timeout.
func TestFlushIsTheLastStopHook(t *testing.T) {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(spans, sdktrace.WithBatchTimeout(time.Hour)))
	metrics := &memExporter{}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metrics, sdkmetric.WithInterval(time.Hour))))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	tel, err := telemetry.New(telemetry.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close()
	lc := newLifecycle(t, lifecycle.Options{Observers: []lifecycle.Observer{tel}})
	lc.AddServer("fake", newFakeServer(lc))
	var appDone time.Time
	spansAtApp, exportsAtApp := -1, -1
	lc.OnStop("app", func(context.Context) error { // added after the flush: runs before it
		spansAtApp = len(spans.GetSpans())
		_, exportsAtApp = metrics.last()
		time.Sleep(20 * time.Millisecond) // a stop hook's work, which the span and the stop_hooks phase cover
		appDone = time.Now()
		return nil
	})
	done := run(lc)
	waitState(t, lc, lifecycle.Ready)
	if err := lc.Drain("flush test"); err != nil {
		t.Fatal(err)
	}
	if err := waitDone(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if spansAtApp != 0 || exportsAtApp != 0 {
		t.Fatalf("%d spans and %d metric exports before the application's stop hook returned, want none", spansAtApp, exportsAtApp)
	}
	tl, _ := lc.Timeline()

	got := spans.GetSpans()
	if len(got) != 1 || got[0].Name != telemetry.SpanName {
		t.Fatalf("after Run: spans %v, want one %s", got, telemetry.SpanName)
	}
	sp := got[0]
	if sp.EndTime.Before(appDone) {
		t.Errorf("span ends %v, before the application's stop hook returned at %v", sp.EndTime, appDone)
	}
	if last := sp.Events[len(sp.Events)-1]; last.Name != "telemetry.flush" || !last.Time.Equal(sp.EndTime) {
		t.Errorf("last event %s at %v, want telemetry.flush at the span's end %v", last.Name, last.Time, sp.EndTime)
	}

	m, n := metrics.last()
	if n != 1 {
		t.Fatalf("%d metric exports after Run, want 1 (the flush)", n)
	}
	if total, minimum := m.phases[telemetry.PhaseTotal], appDone.Sub(tl.Start).Seconds(); total < minimum {
		t.Errorf("phase total %.3fs, want >= %.3fs (t0 to the end of the application's stop hook); phases %v", total, minimum, m.phases)
	}
	if hooks := m.phases[telemetry.PhaseStopHooks]; hooks < 0.02 {
		t.Errorf("phase stop_hooks %.3fs, want >= 20ms (the application's hook); phases %v", hooks, m.phases)
	}
	if m.transitions["DRAINING"] != 1 || m.state != "DRAINING" {
		t.Errorf("exported transitions %v, state %q: want the one to DRAINING, and DRAINING (STOPPED follows the flush)", m.transitions, m.state)
	}
}

// A Telemetry observes one lifecycle: a second lifecycle.New with it fails.
func TestAttachSecondLifecycleFails(t *testing.T) {
	tel, err := telemetry.New(telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close()
	newLifecycle(t, lifecycle.Options{Observers: []lifecycle.Observer{tel}})
	if _, err := lifecycle.New(lifecycle.Options{Observers: []lifecycle.Observer{tel}}); err == nil {
		t.Fatal("a second lifecycle.New with the same Telemetry succeeded")
	}
}
