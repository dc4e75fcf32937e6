package consumer_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/drainkit/drainkit/consumer"
)

// metricsOf collects reader's metrics by name.
func metricsOf(t *testing.T, reader *sdkmetric.ManualReader) map[string]metricdata.Aggregation {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Aggregation{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m.Data
		}
	}
	return out
}

// sum adds up an int64 sum's points whose attributes include want.
func sum(agg metricdata.Aggregation, want ...attribute.KeyValue) int64 {
	s, _ := agg.(metricdata.Sum[int64])
	var n int64
	for _, p := range s.DataPoints {
		ok := true
		for _, kv := range want {
			if v, found := p.Attributes.Value(kv.Key); !found || v != kv.Value {
				ok = false
			}
		}
		if ok {
			n += p.Value
		}
	}
	return n
}

// gauge returns a gauge's single value, as float64.
func gauge(t *testing.T, agg metricdata.Aggregation) float64 {
	t.Helper()
	switch g := agg.(type) {
	case metricdata.Gauge[int64]:
		if len(g.DataPoints) == 1 {
			return float64(g.DataPoints[0].Value)
		}
	case metricdata.Gauge[float64]:
		if len(g.DataPoints) == 1 {
			return g.DataPoints[0].Value
		}
	}
	t.Fatalf("gauge %T: want one data point", agg)
	return 0
}

// A rolling restart through the consumer with an OTel SDK: every call has
// a span with its outcome and stage and is counted by them; the retries,
// budget denials and ejections counted equal the Transport's own Status;
// the view's age, revision, epoch and instance count are exported.
func TestTelemetryOfRollingRestart(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())

	old := []*backend{newBackend(t, "a", nil), newBackend(t, "b", nil), newBackend(t, "c", nil)}
	f := newFeed()
	rev := uint64(1)
	f.push(rev, old...)
	_, tr, _ := newClient(t, f, consumer.WatcherOptions{EmptyHold: -1}, consumer.Options{
		MeterProvider: mp, TracerProvider: tp,
		Outlier: consumer.OutlierDetection{BaseEjectionTime: time.Minute}})

	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			do(tr, "GET", "")
		}
	})
	more := func() { // 20 more calls
		n := tr.Status().Requests + 20
		eventually(t, 10*time.Second, "20 more calls", func() bool { return tr.Status().Requests >= n })
	}
	cur := old
	for i, o := range old {
		more()
		fresh := newBackend(t, "new"+string(rune('a'+i)), nil)
		o.Close() // killed before the registry drops it: refused dials, retried, ejected
		more()
		cur = append(cur[1:], fresh)
		rev++
		f.push(rev, cur...)
		more()
	}
	close(stop)
	wg.Wait()

	s := tr.Status()
	ms := metricsOf(t, reader)
	svc := attribute.String("drainkit.service", "orders")
	if got := sum(ms[consumer.MetricRequests], svc); got != int64(s.Requests) {
		t.Errorf("%s = %d, Status.Requests = %d", consumer.MetricRequests, got, s.Requests)
	}
	answered := sum(ms[consumer.MetricRequests], attribute.String("drainkit.consumer.outcome", "answered"), attribute.String("drainkit.consumer.stage", consumer.StageAnswered))
	if answered != int64(s.Requests-s.Failures) {
		t.Errorf("answered calls %d, Status says %d", answered, s.Requests-s.Failures)
	}
	for name, want := range map[string]uint64{consumer.MetricRetries: s.Retries, consumer.MetricEjections: s.Ejections,
		consumer.MetricBudgetDenials: s.BudgetExhausted, consumer.MetricPanicEntries: s.PanicEntries} {
		if got := sum(ms[name], svc); got != int64(want) {
			t.Errorf("%s = %d, Status says %d", name, got, want)
		}
	}
	if s.Retries == 0 || s.Ejections != 3 {
		t.Errorf("status %v: want retries and 3 ejections (one per killed instance)", s)
	}
	refused := sum(ms[consumer.MetricAttemptFailures], attribute.String("drainkit.consumer.stage", consumer.StageConnectRefused))
	if refused == 0 || refused != sum(ms[consumer.MetricAttemptFailures]) {
		t.Errorf("attempt failures: %d refused dials of %d, want all failures to be refused dials", refused, sum(ms[consumer.MetricAttemptFailures]))
	}
	if g := gauge(t, ms[consumer.MetricViewRevision]); g != float64(rev) {
		t.Errorf("%s = %v, want %d", consumer.MetricViewRevision, g, rev)
	}
	if g := gauge(t, ms[consumer.MetricViewInstances]); g != 3 {
		t.Errorf("%s = %v, want 3", consumer.MetricViewInstances, g)
	}
	if g := gauge(t, ms[consumer.MetricViewAge]); g < 0 || g > 60 {
		t.Errorf("%s = %vs, want the view's age", consumer.MetricViewAge, g)
	}
	gauge(t, ms[consumer.MetricViewEpoch])

	ended := spans.Ended()
	if len(ended) != int(s.Requests) {
		t.Errorf("%d spans for %d calls", len(ended), s.Requests)
	}
	picks := 0
	for _, sp := range ended {
		attrs := attribute.NewSet(sp.Attributes()...)
		oc, ok1 := attrs.Value("drainkit.consumer.outcome")
		st, ok2 := attrs.Value("drainkit.consumer.stage")
		if _, ok3 := attrs.Value("drainkit.view.revision"); !ok1 || !ok2 || !ok3 {
			t.Fatalf("span %q attributes %v: want outcome, stage and view revision", sp.Name(), sp.Attributes())
		}
		if oc.AsString() != "answered" || st.AsString() != consumer.StageAnswered || sp.Name() != http.MethodGet+" orders" {
			t.Errorf("span %q: outcome %s stage %s", sp.Name(), oc.AsString(), st.AsString())
		}
		for _, e := range sp.Events() {
			if e.Name == "drainkit.consumer.pick" {
				picks++
			}
		}
	}
	if picks != int(s.Requests+s.Retries) {
		t.Errorf("%d pick events for %d calls and %d retries", picks, s.Requests, s.Retries)
	}
}
