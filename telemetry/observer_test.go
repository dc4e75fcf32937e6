package telemetry_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/telemetry"
)

// pollPause is the pause between two checks of a condition polled with a
// deadline.
func pollPause() { time.Sleep(time.Millisecond) }

// Steps recorded concurrently (confirmed runs beside the window) can reach
// the observer out of order; the span still follows the timeline, and each
// phase is recorded once.
func TestOutOfOrderStepsFollowTimeline(t *testing.T) {
	exp, tp := newTracing(t)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	tel, err := telemetry.New(telemetry.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close()
	t0 := time.Now()
	tel.OnTransition(lifecycle.Transition{From: lifecycle.Ready, To: lifecycle.Draining, Cause: lifecycle.CauseSignal, Reason: "terminated", At: t0})
	steps := []lifecycle.Step{
		{Name: lifecycle.StepNotReady},
		{Name: lifecycle.StepDeregistered, Offset: 10 * time.Millisecond},
		{Name: lifecycle.StepConfirmed, Offset: 20 * time.Millisecond},
		{Name: lifecycle.StepWindowEnded, Offset: 30 * time.Millisecond},
		{Name: lifecycle.StepListenersClosed, Offset: 31 * time.Millisecond},
		{Name: lifecycle.StepForceClosed, Offset: 50 * time.Millisecond, Err: "drain.timeout 19ms reached: 1 cut"},
		{Name: lifecycle.StepStopHooksDone, Offset: 60 * time.Millisecond},
	}
	snap := func(n int) lifecycle.Timeline {
		return lifecycle.Timeline{Start: t0, Reason: "terminated", Steps: steps[:n], LateArrivals: 3, ForceClosed: 1}
	}
	tel.OnDrainStep(snap(1), steps[0])
	tel.OnDrainStep(snap(2), steps[1])
	tel.OnDrainStep(snap(4), steps[3]) // window_ended observed before confirmed
	tel.OnDrainStep(snap(3), steps[2])
	for i := 5; i <= len(steps); i++ {
		tel.OnDrainStep(snap(i), steps[i-1])
	}
	tel.OnTransition(lifecycle.Transition{From: lifecycle.Draining, To: lifecycle.Stopped, Cause: lifecycle.CauseDrain, At: t0.Add(61 * time.Millisecond)})

	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans", len(spans))
	}
	var got []string
	for _, e := range spans[0].Events {
		got = append(got, e.Name)
	}
	want := []string{"transition", "not_ready", "deregistered", "confirmed", "window_ended", "listeners_closed", "force_closed", "stop_hooks_done", "transition"}
	if len(got) != len(want) {
		t.Fatalf("events %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("events %v, want %v", got, want)
		}
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	phases := map[string]float64{}
	var state string
	var late, forced int64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					ph, _ := p.Attributes.Value(attribute.Key("phase"))
					if p.Count != 1 {
						t.Errorf("phase %s recorded %d times", ph.AsString(), p.Count)
					}
					phases[ph.AsString()] = p.Sum
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					if s, ok := p.Attributes.Value("state"); ok && p.Value == 1 {
						state = s.AsString()
					}
				}
			case metricdata.Sum[int64]:
				switch m.Name {
				case telemetry.MetricLateRequests:
					late = d.DataPoints[0].Value
				case telemetry.MetricForcedCloses:
					forced = d.DataPoints[0].Value
				}
			}
		}
	}
	for phase, want := range map[string]time.Duration{
		telemetry.PhaseDeregister: 10 * time.Millisecond, telemetry.PhaseConfirm: 20 * time.Millisecond,
		telemetry.PhasePropagation: 30 * time.Millisecond, telemetry.PhaseCloseListeners: time.Millisecond,
		telemetry.PhaseInFlight: 19 * time.Millisecond, telemetry.PhaseStopHooks: 10 * time.Millisecond,
		telemetry.PhaseTotal: 60 * time.Millisecond,
	} {
		if got, ok := phases[phase]; !ok || got != want.Seconds() {
			t.Errorf("phase %s = %v (present %v), want %v", phase, got, ok, want.Seconds())
		}
	}
	// Not attached: state and counts come from the observed events.
	if state != "STOPPED" || late != 3 || forced != 1 {
		t.Errorf("state %q late %d forced %d, want STOPPED 3 1", state, late, forced)
	}
}

// The zero Options use the global providers (no-op by default) and work.
func TestGlobalProviders(t *testing.T) {
	tel, err := telemetry.New(telemetry.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tel.OnTransition(lifecycle.Transition{From: lifecycle.Starting, To: lifecycle.Draining, At: time.Now()})
	tel.OnDrainStep(lifecycle.Timeline{Steps: []lifecycle.Step{{Name: lifecycle.StepNotReady}}}, lifecycle.Step{Name: lifecycle.StepNotReady})
	if err := tel.Attach(nil); err == nil {
		t.Error("Attach(nil) succeeded")
	}
	if err := tel.Close(); err != nil {
		t.Fatal(err)
	}
}
