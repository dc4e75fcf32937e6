package telemetry_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/telemetry"
)

// A drain observed by a Telemetry becomes one span, with an event for the
// transition to DRAINING and per timeline step, which ends as the flush, the
// last stop hook, begins; and the lifecycle's metrics, read here by a pull
// reader after Run returned.
func Example() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	ctx := context.Background()
	defer func() { _ = tp.Shutdown(ctx); _ = mp.Shutdown(ctx) }()

	tel, err := telemetry.New(telemetry.Options{MeterProvider: mp, TracerProvider: tp})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tel.Close()
	lc, err := lifecycle.New(lifecycle.Options{
		Timings: budget.Timings{WarmupTimeout: time.Second, DrainTimeout: time.Second,
			StopTimeout: time.Second, GracePeriod: 3 * time.Second},
		Signals:   []os.Signal{}, // none: the example drains through Drain
		Logger:    slog.New(slog.DiscardHandler),
		Observers: []lifecycle.Observer{tel}, // the whole telemetry wiring
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	lc.AddServer("api", newFakeServer(lc))

	sub, unsubscribe := lc.Subscribe()
	done := make(chan error, 1)
	go func() { done <- lc.Run(ctx) }()
	for t := range sub {
		if t.To == lifecycle.Ready {
			break
		}
	}
	unsubscribe()
	_ = lc.Drain("rollout")
	fmt.Println("exit code", lifecycle.ExitCode(<-done)) // the flush ran as the last stop hook

	for _, s := range spans.GetSpans() {
		fmt.Println("span", s.Name, s.Status.Code)
		for _, e := range s.Events {
			attrs := attribute.NewSet(e.Attributes...)
			if to, ok := attrs.Value("to"); ok {
				fmt.Println("  ", e.Name, "to", to.AsString())
				continue
			}
			fmt.Println("  ", e.Name)
		}
	}
	var rm metricdata.ResourceMetrics
	_ = reader.Collect(ctx, &rm)
	var kinds int
	var state string
	for _, m := range rm.ScopeMetrics[0].Metrics {
		switch data := m.Data.(type) {
		case metricdata.Sum[int64]:
			if m.Name == telemetry.MetricTransitions {
				kinds = len(data.DataPoints) // one per from, to and cause
			}
		case metricdata.Gauge[int64]:
			for _, p := range data.DataPoints {
				if st, _ := p.Attributes.Value("state"); m.Name == telemetry.MetricState && p.Value == 1 {
					state = st.AsString()
				}
			}
		}
	}
	fmt.Println(telemetry.MetricTransitions, kinds)
	fmt.Println(telemetry.MetricState, state)
	// Output:
	// exit code 0
	// span drainkit.drain Unset
	//    transition to DRAINING
	//    not_ready
	//    window_ended
	//    listeners_closed
	//    idle
	//    telemetry.flush
	// drainkit.lifecycle.transitions 3
	// drainkit.lifecycle.state STOPPED
}
