package drill

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/drainkit/drainkit/consumer"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/textwidth"
)

// ConsumerTelemetry is what the drainkit consumers' OpenTelemetry
// instruments recorded during one strategy's load: each consumer runs with
// an OTel SDK of its own (a MeterProvider with a ManualReader, and a
// TracerProvider whose span processor counts the ended spans), read once
// the load has ended. The drill puts it next to its own records, so that a
// reader (and TestDrillConsumerTelemetry) can check the consumer's account
// of every call against what the drill saw.
type ConsumerTelemetry struct {
	// Calls sums drainkit.consumer.requests; ByOutcome splits it by
	// "<outcome>/<stage>" ("answered/answered", "failed/connect_refused");
	// Unclassified counts calls recorded without an outcome or a stage.
	Calls        int64            `json:"calls"`
	ByOutcome    map[string]int64 `json:"by_outcome"`
	Unclassified int64            `json:"unclassified"`
	// Spans counts the calls' ended spans, SpansClassified those with
	// both drainkit.consumer.outcome and drainkit.consumer.stage.
	Spans           int64 `json:"spans"`
	SpansClassified int64 `json:"spans_classified"`
	// Retries, BudgetDenials, Ejections and PanicEntries sum the
	// counters of the same names; AttemptFailures splits the failed
	// attempts by stage.
	Retries         int64            `json:"retries"`
	BudgetDenials   int64            `json:"budget_denials"`
	Ejections       int64            `json:"ejections"`
	PanicEntries    int64            `json:"panic_entries"`
	AttemptFailures map[string]int64 `json:"attempt_failures"`
	// ViewRevision is the highest drainkit.consumer.view.revision a
	// consumer exported, ViewAgeMaxSeconds the oldest
	// drainkit.consumer.view.age, when the load ended.
	ViewRevision      int64   `json:"view_revision"`
	ViewAgeMaxSeconds float64 `json:"view_age_max_s"`
}

// add sums o into t (the drill's consumers of one strategy).
func (t *ConsumerTelemetry) add(o ConsumerTelemetry) {
	t.Calls += o.Calls
	t.Unclassified += o.Unclassified
	t.Spans += o.Spans
	t.SpansClassified += o.SpansClassified
	t.Retries += o.Retries
	t.BudgetDenials += o.BudgetDenials
	t.Ejections += o.Ejections
	t.PanicEntries += o.PanicEntries
	t.ViewRevision = max(t.ViewRevision, o.ViewRevision)
	t.ViewAgeMaxSeconds = max(t.ViewAgeMaxSeconds, o.ViewAgeMaxSeconds)
	t.ByOutcome = addCounts(t.ByOutcome, o.ByOutcome)
	t.AttemptFailures = addCounts(t.AttemptFailures, o.AttemptFailures)
}

func addCounts(to, from map[string]int64) map[string]int64 {
	if to == nil {
		to = map[string]int64{}
	}
	for k, v := range from {
		to[k] += v
	}
	return to
}

// telemetryReporter is a Client that reports its OpenTelemetry counts.
type telemetryReporter interface {
	Telemetry() ConsumerTelemetry
}

// sumTelemetry sums the telemetry of the clients that report it; nil when
// none does.
func sumTelemetry(clients []Client) *ConsumerTelemetry {
	var sum *ConsumerTelemetry
	for _, c := range clients {
		if r, ok := c.(telemetryReporter); ok {
			if sum == nil {
				sum = &ConsumerTelemetry{}
			}
			sum.add(r.Telemetry())
		}
	}
	return sum
}

// consumerSDK is one drainkit consumer's OTel SDK.
type consumerSDK struct {
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
	tp     *sdktrace.TracerProvider
	spans  *spanCounter
}

func newConsumerSDK() *consumerSDK {
	s := &consumerSDK{reader: sdkmetric.NewManualReader(), spans: &spanCounter{}}
	s.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(s.reader))
	s.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(s.spans))
	return s
}

// collect reads the metrics and the span counts.
func (s *consumerSDK) collect() ConsumerTelemetry {
	t := ConsumerTelemetry{ByOutcome: map[string]int64{}, AttemptFailures: map[string]int64{},
		Spans: s.spans.ended.Load(), SpansClassified: s.spans.classified.Load()}
	var rm metricdata.ResourceMetrics
	if err := s.reader.Collect(context.Background(), &rm); err != nil {
		return t
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch m.Name {
			case consumer.MetricRequests:
				eachPoint(m.Data, func(attrs attribute.Set, v int64) {
					t.Calls += v
					oc, ok1 := attrs.Value("drainkit.consumer.outcome")
					st, ok2 := attrs.Value("drainkit.consumer.stage")
					if !ok1 || !ok2 {
						t.Unclassified += v
						return
					}
					t.ByOutcome[oc.AsString()+"/"+st.AsString()] += v
				})
			case consumer.MetricAttemptFailures:
				eachPoint(m.Data, func(attrs attribute.Set, v int64) {
					st, _ := attrs.Value("drainkit.consumer.stage")
					t.AttemptFailures[st.AsString()] += v
				})
			case consumer.MetricRetries:
				eachPoint(m.Data, func(_ attribute.Set, v int64) { t.Retries += v })
			case consumer.MetricBudgetDenials:
				eachPoint(m.Data, func(_ attribute.Set, v int64) { t.BudgetDenials += v })
			case consumer.MetricEjections:
				eachPoint(m.Data, func(_ attribute.Set, v int64) { t.Ejections += v })
			case consumer.MetricPanicEntries:
				eachPoint(m.Data, func(_ attribute.Set, v int64) { t.PanicEntries += v })
			case consumer.MetricViewRevision:
				eachPoint(m.Data, func(_ attribute.Set, v int64) { t.ViewRevision = max(t.ViewRevision, v) })
			case consumer.MetricViewAge:
				if g, ok := m.Data.(metricdata.Gauge[float64]); ok {
					for _, p := range g.DataPoints {
						t.ViewAgeMaxSeconds = max(t.ViewAgeMaxSeconds, p.Value)
					}
				}
			}
		}
	}
	return t
}

// eachPoint calls f with every data point of an int64 sum or gauge.
func eachPoint(agg metricdata.Aggregation, f func(attribute.Set, int64)) {
	switch a := agg.(type) {
	case metricdata.Sum[int64]:
		for _, p := range a.DataPoints {
			f(p.Attributes, p.Value)
		}
	case metricdata.Gauge[int64]:
		for _, p := range a.DataPoints {
			f(p.Attributes, p.Value)
		}
	}
}

func (s *consumerSDK) shutdown() {
	ctx := context.Background()
	s.mp.Shutdown(ctx)
	s.tp.Shutdown(ctx)
}

// spanCounter is an in-memory span processor that keeps counts, not spans:
// a drill's tens of thousands of calls would otherwise be held until the
// end for one question, whether each call's span says how it ended.
type spanCounter struct {
	ended, classified atomic.Int64
}

func (c *spanCounter) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (c *spanCounter) OnEnd(s sdktrace.ReadOnlySpan) {
	c.ended.Add(1)
	outcome, stage := false, false
	for _, kv := range s.Attributes() {
		switch kv.Key {
		case "drainkit.consumer.outcome":
			outcome = kv.Value.AsString() != ""
		case "drainkit.consumer.stage":
			stage = kv.Value.AsString() != ""
		}
	}
	if outcome && stage {
		c.classified.Add(1)
	}
}

func (c *spanCounter) Shutdown(context.Context) error   { return nil }
func (c *spanCounter) ForceFlush(context.Context) error { return nil }

// writeTelemetry writes, for the strategies whose consumers export
// telemetry, the counts next to the drill's own, and the legend of its
// columns. The default table fits textwidth.Columns: the calls by outcome
// and stage follow it; wide (Config.Wide) keeps them as a column.
func writeTelemetry(w io.Writer, sums []Summary, wide bool) error {
	var rows []Summary
	for _, s := range sums {
		if s.ConsumerTelemetry != nil {
			rows = append(rows, s)
		}
	}
	if len(rows) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("\nconsumer telemetry (OpenTelemetry, as the drainkit consumers counted; the drill's own count in brackets):\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	if wide {
		fmt.Fprintln(tw, "SCENARIO\tSTRATEGY\tCALLS\tBY OUTCOME/STAGE\tRETRIES\tEJECTIONS\tBUDGET DENIALS\tPANICS\tVIEW REVISION")
	} else {
		fmt.Fprintln(tw, "SCENARIO\tSTRATEGY\tCALLS\tRETRIES\tEJECTIONS\tBUDGET DENIALS\tPANICS\tVIEW REVISION")
	}
	var under []string
	for _, s := range rows {
		t := s.ConsumerTelemetry
		cells := []string{s.Scenario, s.Name, fmt.Sprintf("%d [%d]", t.Calls, s.Requests)}
		if wide {
			cells = append(cells, telemetryCounts(t.ByOutcome))
		} else {
			under = append(under, textwidth.FitLine(fmt.Sprintf("%s %s: calls by outcome/stage %s", s.Scenario, s.Name, telemetryCounts(t.ByOutcome)), textwidth.Columns, textwidth.Hang))
		}
		cells = append(cells, fmt.Sprintf("%d [%d]", t.Retries, s.Retries), fmt.Sprintf("%d [%d]", t.Ejections, s.Ejections),
			strconv.FormatInt(t.BudgetDenials, 10), strconv.FormatInt(t.PanicEntries, 10), strconv.FormatInt(t.ViewRevision, 10))
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, l := range under {
		b.WriteString(l + "\n")
	}
	b.WriteString(textwidth.Legend([]string{"columns: CALLS the calls the consumers counted;",
		"BY OUTCOME/STAGE those calls by how they ended and where (answered/answered, failed/connect_refused, ...);",
		"RETRIES the extra attempts (a request sent three times counts 2);", "EJECTIONS instances the consumers ejected locally;",
		"BUDGET DENIALS retries the retry budget refused; PANICS the times a consumer's panic mode began;",
		"VIEW REVISION the highest revision of a consumer's view of the instances."}))
	_, err := io.WriteString(w, b.String())
	return err
}

// telemetryCounts renders counts as "a=1 b=2", sorted by key.
func telemetryCounts(m map[string]int64) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%d", k, m[k]))
	}
	return strings.Join(parts, " ")
}
