package telemetry_test

import (
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/telemetry"
)

// scrape GETs url and parses the Prometheus text format.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// newPrometheusLifecycle returns a Prometheus provider and a lifecycle
// observed by a Telemetry on it, both closed when the test ends.
func newPrometheusLifecycle(t *testing.T) (*telemetry.Prometheus, *lifecycle.Lifecycle) {
	t.Helper()
	prom, err := telemetry.NewPrometheus()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = prom.Shutdown(context.Background()) })
	tel, err := telemetry.New(telemetry.Options{MeterProvider: prom.MeterProvider()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tel.Close() })
	return prom, newLifecycle(t, lifecycle.Options{Observers: []lifecycle.Observer{tel}})
}

// value returns the value of the sample of family name whose labels include
// labels ("k=v" pairs); for a histogram, its sum. ok is false if absent.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		for _, l := range labels {
			k, v, _ := strings.Cut(l, "=")
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == k && lp.GetValue() == v {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return m.GetHistogram().GetSampleSum(), true
		}
	}
	return 0, false
}

// A service drains under load with the Prometheus endpoint on; /metrics then
// reports the late-request count, each phase's duration and the state exactly
// as the timeline has them.
func TestPrometheusMatchesTimelineUnderLoad(t *testing.T) {
	prom, lc := newPrometheusLifecycle(t)

	// Admin listener with GET /metrics, serving through the whole drain.
	adminLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", prom.Handler())
	admin := &http.Server{Handler: mux}
	adminDone := make(chan struct{})
	go func() { defer close(adminDone); _ = admin.Serve(adminLn) }()
	defer func() { _ = admin.Close(); <-adminDone }()
	metricsURL := "http://" + adminLn.Addr().String() + "/metrics"

	// The service: every request takes 20ms, so work is in flight throughout.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var served atomic.Int64
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		served.Add(1)
		_, _ = io.WriteString(w, "ok")
	})}
	lc.AddServer("http", httpdrain.New(srv, ln))
	done := run(lc)
	waitState(t, lc, lifecycle.Ready)

	fams := scrape(t, metricsURL)
	if v, ok := value(fams, "drainkit_lifecycle_state", "state=READY"); !ok || v != 1 {
		t.Errorf("state READY = %v (present %v), want 1", v, ok)
	}
	if v, ok := value(fams, "drainkit_lifecycle_state", "state=STARTING"); !ok || v != 0 {
		t.Errorf("state STARTING = %v (present %v), want 0", v, ok)
	}
	if _, ok := fams["http_server_active_requests"]; !ok {
		t.Errorf("no http_server_active_requests; families: %v", keys(fams))
	}

	// Load: 4 clients with keep-alive until the listener closes.
	url := "http://" + ln.Addr().String() + "/"
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var ok200, failed atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := c.Get(url)
				if err != nil {
					failed.Add(1)
					<-stop // refused once the listener closed: wait for the test to end
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ok200.Add(1)
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	// Let the load reach the server before the drain.
	for deadline := time.Now().Add(10 * time.Second); served.Load() < 20; {
		if time.Now().After(deadline) {
			t.Fatal("load never reached the server")
		}
		pollPause()
	}
	if err := lc.Drain("prometheus test"); err != nil {
		t.Fatal(err)
	}
	mid := scrape(t, metricsURL)
	if v, _ := value(mid, "drainkit_lifecycle_state", "state=DRAINING"); v != 1 && lc.State() == lifecycle.Draining {
		t.Errorf("state DRAINING = %v during the drain", v)
	}
	if err := waitDone(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	tl, _ := lc.Timeline()
	t.Logf("timeline: %+v; served %d, failed %d", tl, ok200.Load(), failed.Load())

	fams = scrape(t, metricsURL)
	if tl.LateArrivals == 0 {
		t.Fatalf("no late arrivals under load: the test did not exercise the window")
	}
	if v, ok := value(fams, "drainkit_drain_late_requests_total"); !ok || int64(v) != tl.LateArrivals {
		t.Errorf("late requests = %v (present %v), timeline %d", v, ok, tl.LateArrivals)
	}
	if v, ok := value(fams, "drainkit_drain_forced_closes_total"); !ok || int(v) != tl.ForceClosed {
		t.Errorf("forced closes = %v (present %v), timeline %d", v, ok, tl.ForceClosed)
	}
	off := func(name string) time.Duration {
		d, ok := tl.Offset(name)
		if !ok {
			t.Fatalf("timeline lacks %s: %+v", name, tl.Steps)
		}
		return d
	}
	// The phases that end with the drain end at the flush, the last stop
	// hook: after the step before the stop hooks, before stop_hooks_done.
	flushAt := off(lifecycle.StepIdle) + time.Duration(phaseSum(t, fams, telemetry.PhaseStopHooks)*float64(time.Second))
	if flushAt < off(lifecycle.StepIdle) || flushAt > off(lifecycle.StepStopHooksDone) {
		t.Errorf("the stop_hooks phase ends at %v, not between %s and %s", flushAt, lifecycle.StepIdle, lifecycle.StepStopHooksDone)
	}
	for phase, want := range map[string]time.Duration{
		telemetry.PhasePropagation:    off(lifecycle.StepWindowEnded),
		telemetry.PhaseCloseListeners: off(lifecycle.StepListenersClosed) - off(lifecycle.StepWindowEnded),
		telemetry.PhaseInFlight:       off(lifecycle.StepIdle) - off(lifecycle.StepListenersClosed),
		telemetry.PhaseTotal:          flushAt,
	} {
		got, ok := value(fams, "drainkit_drain_duration_seconds", "phase="+phase)
		if !ok || math.Abs(got-want.Seconds()) > 1e-6 {
			t.Errorf("phase %s = %v (present %v), timeline %v", phase, got, ok, want.Seconds())
		}
		if n := fams["drainkit_drain_duration_seconds"]; n != nil {
			for _, m := range n.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "phase" && l.GetValue() == phase && m.GetHistogram().GetSampleCount() != 1 {
						t.Errorf("phase %s recorded %d times, want once", phase, m.GetHistogram().GetSampleCount())
					}
				}
			}
		}
	}
	if p := off(lifecycle.StepWindowEnded); p < testTimings().PropagationMin {
		t.Errorf("window ended at %v, before propagation.min", p)
	}
	for _, s := range []string{"STARTING", "READY", "EJECTED", "DRAINING", "STOPPED"} {
		want := 0.0
		if s == "STOPPED" {
			want = 1
		}
		if v, ok := value(fams, "drainkit_lifecycle_state", "state="+s); !ok || v != want {
			t.Errorf("state %s = %v (present %v), want %v", s, v, ok, want)
		}
	}
	if v, _ := value(fams, "drainkit_lifecycle_transitions_total", "from=READY", "to=DRAINING", "cause=operator"); v != 1 {
		t.Errorf("READY->DRAINING transitions = %v, want 1", v)
	}
	if v, _ := value(fams, "http_server_active_requests"); v != 0 {
		t.Errorf("active requests after the drain = %v, want 0", v)
	}

	// Only GET and HEAD.
	resp, err := http.Post(metricsURL, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /metrics: %s", resp.Status)
	}
}

func keys(m map[string]*dto.MetricFamily) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// phaseSum returns the sum of the drain-duration histogram of phase, failing
// the test when it is missing.
func phaseSum(t *testing.T, fams map[string]*dto.MetricFamily, phase string) float64 {
	t.Helper()
	v, ok := value(fams, "drainkit_drain_duration_seconds", "phase="+phase)
	if !ok {
		t.Fatalf("no drainkit_drain_duration_seconds for phase %s", phase)
	}
	return v
}
