package telemetry_test

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/registrytest"
	"github.com/drainkit/drainkit/telemetry"
)

// newTracing returns an in-memory span exporter and a provider that exports
// synchronously to it.
func newTracing(t *testing.T) (*tracetest.InMemoryExporter, *sdktrace.TracerProvider) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return exp, tp
}

// One drain produces one span whose events are the DRAINING transition, the
// timeline's steps in order at t0+offset up to the stop hooks, and the flush,
// which ends it.
func TestDrainSpanHasTimelineEventsInOrder(t *testing.T) {
	exp, tp := newTracing(t)
	mp := sdkmetric.NewMeterProvider()
	defer mp.Shutdown(context.Background())
	tel, err := telemetry.New(telemetry.Options{TracerProvider: tp, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close()
	lc := newLifecycle(t, lifecycle.Options{Observers: []lifecycle.Observer{tel}})
	mem := registrytest.NewMemory("svc")
	lc.AddRegistrar("memory", mem) // deregistered + confirmed steps, confirmed concurrent with the window
	srv := newFakeServer(lc)
	lc.AddServer("fake", srv)
	lc.OnStop("noop", func(context.Context) error { return nil })
	done := run(lc)
	waitState(t, lc, lifecycle.Ready)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := mem.Wait(ctx, func(s registry.Status) bool { return s.Health == registry.Passing }); err != nil {
		t.Fatalf("never registered: %v", err)
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("%d spans before the drain", n)
	}
	if err := lc.Drain("span test"); err != nil {
		t.Fatal(err)
	}
	if err := waitDone(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	tl, _ := lc.Timeline()

	spans := exp.GetSpans()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1: %v", len(spans), spans)
	}
	sp := spans[0]
	if sp.Name != telemetry.SpanName || !sp.StartTime.Equal(tl.Start) {
		t.Errorf("span %q starts %v, want %q at %v", sp.Name, sp.StartTime, telemetry.SpanName, tl.Start)
	}
	type ev struct {
		name string
		at   time.Time
	}
	want := []ev{{"transition", tl.Start}}
	for _, s := range tl.Steps[:len(tl.Steps)-1] { // stop_hooks_done follows the flush
		want = append(want, ev{s.Name, tl.Start.Add(s.Offset)})
	}
	want = append(want, ev{"telemetry.flush", sp.EndTime})
	if len(sp.Events) != len(want) {
		t.Fatalf("%d events %v, want %d %v", len(sp.Events), sp.Events, len(want), want)
	}
	for i, w := range want {
		e := sp.Events[i]
		if e.Name != w.name || !e.Time.Equal(w.at) {
			t.Errorf("event %d = %s at %v, want %s at %v", i, e.Name, e.Time, w.name, w.at)
		}
	}
	last, idle := tl.Steps[len(tl.Steps)-1], tl.Steps[len(tl.Steps)-2]
	if last.Name != lifecycle.StepStopHooksDone || idle.Name != lifecycle.StepIdle ||
		sp.EndTime.Before(tl.Start.Add(idle.Offset)) || sp.EndTime.After(tl.Start.Add(last.Offset)) {
		t.Errorf("span ends %v, not between the steps %s and %s: %+v", sp.EndTime, idle.Name, last.Name, tl.Steps)
	}
	names := map[string]bool{}
	for _, s := range tl.Steps {
		names[s.Name] = true
	}
	for _, n := range []string{lifecycle.StepNotReady, lifecycle.StepDeregistered, lifecycle.StepConfirmed,
		lifecycle.StepWindowEnded, lifecycle.StepListenersClosed, lifecycle.StepIdle, lifecycle.StepStopHooksDone} {
		if !names[n] {
			t.Errorf("timeline lacks step %s: %+v", n, tl.Steps)
		}
	}
	attrs := attribute.NewSet(sp.Attributes...)
	if v, _ := attrs.Value("drainkit.drain.reason"); v.AsString() != "span test" {
		t.Errorf("reason attribute = %q", v.AsString())
	}
	if v, ok := attrs.Value("drainkit.drain.late_requests"); !ok || v.AsInt64() != tl.LateArrivals {
		t.Errorf("late_requests attribute = %v, want %d", v.AsInt64(), tl.LateArrivals)
	}
	if sp.Status.Code != codes.Unset {
		t.Errorf("status %v for a clean drain", sp.Status)
	}
}

// A drain that force-closes work marks the span as an error.
func TestForcedDrainSpanStatus(t *testing.T) {
	exp, tp := newTracing(t)
	tel, err := telemetry.New(telemetry.Options{TracerProvider: tp, MeterProvider: sdkmetric.NewMeterProvider()})
	if err != nil {
		t.Fatal(err)
	}
	defer tel.Close()
	tm := testTimings()
	tm.DrainTimeout = 200 * time.Millisecond
	lc := newLifecycle(t, lifecycle.Options{Timings: tm, Observers: []lifecycle.Observer{tel}})
	srv := newFakeServer(lc)
	srv.stuck.Store(2) // two requests that never finish
	lc.AddServer("fake", srv)
	done := run(lc)
	waitState(t, lc, lifecycle.Ready)
	_ = lc.Drain("forced")
	if code := lifecycle.ExitCode(waitDone(t, done)); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	sp := exp.GetSpans()[0]
	if sp.Status.Code != codes.Error {
		t.Errorf("status %v, want Error", sp.Status)
	}
	if v, _ := attrSet(sp.Attributes).Value("drainkit.drain.forced_closes"); v.AsInt64() != 2 {
		t.Errorf("forced_closes = %d, want 2", v.AsInt64())
	}
}

func attrSet(kv []attribute.KeyValue) *attribute.Set {
	s := attribute.NewSet(kv...)
	return &s
}
