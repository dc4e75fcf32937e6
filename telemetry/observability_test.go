package telemetry_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/drainkit/drainkit/lifecycle"
)

// flakyRegistrar fails its Syncs while failing is set; Deregister succeeds.
type flakyRegistrar struct{ failing atomic.Bool }

func (r *flakyRegistrar) Sync(context.Context, lifecycle.Transition) error {
	if r.failing.Load() {
		return errors.New("registry unreachable")
	}
	return nil
}
func (r *flakyRegistrar) Deregister(context.Context) error { return nil }

// scrapeHandler GETs /metrics from h and parses the Prometheus text format.
func scrapeHandler(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", rec.Code)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// drainWithRegistrar runs a lifecycle with the Prometheus exporter and a
// registrar whose Syncs fail, scrapes /metrics while READY (once the failing
// Sync was recorded) and again after a drain, and returns both scrapes.
func drainWithRegistrar(t *testing.T) (ready, drained map[string]*dto.MetricFamily) {
	t.Helper()
	prom, lc := newPrometheusLifecycle(t)
	reg := &flakyRegistrar{}
	reg.failing.Store(true)
	lc.AddRegistrar("orders-registry", reg)
	lc.AddServer("fake", newFakeServer(lc))
	done := run(lc)
	waitState(t, lc, lifecycle.Ready)
	for deadline := time.Now().Add(10 * time.Second); ; pollPause() {
		ready = scrapeHandler(t, prom.Handler())
		if _, ok := value(ready, "drainkit_registrar_failing", "registrar=orders-registry"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no drainkit_registrar_failing sample after the failed Sync")
		}
	}
	if err := lc.Drain("observability test"); err != nil {
		t.Fatal(err)
	}
	if err := waitDone(t, done); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return ready, scrapeHandler(t, prom.Handler())
}

// TestRegistrarFailingMetric: drainkit_registrar_failing is 1 for a
// registrar whose last Sync failed and 0 once its deregistration succeeded.
func TestRegistrarFailingMetric(t *testing.T) {
	ready, drained := drainWithRegistrar(t)
	if v, _ := value(ready, "drainkit_registrar_failing", "registrar=orders-registry"); v != 1 {
		t.Errorf("while the registrar's Sync fails: %v, want 1", v)
	}
	if v, ok := value(drained, "drainkit_registrar_failing", "registrar=orders-registry"); !ok || v != 0 {
		t.Errorf("after a successful deregistration: %v (present %v), want 0", v, ok)
	}
}

// metricName matches the names of drainkit's metrics in PromQL and in the
// Prometheus exposition format.
var metricName = regexp.MustCompile(`\b(?:drainkit|http_server)_[a-z0-9_]*[a-z0-9]\b`)

// TestObservabilityFilesUseExportedMetrics: every metric name the alert rules
// (docs/observability/alerts.yaml, comments aside) and the Grafana dashboard
// (docs/observability/dashboard.json, its queries) use is one that
// /metrics serves: a family's name, or a histogram's _bucket, _sum or _count
// series, taken from a scrape of a lifecycle that registered, failed a Sync,
// and drained.
func TestObservabilityFilesUseExportedMetrics(t *testing.T) {
	ready, drained := drainWithRegistrar(t)
	exported := map[string]bool{}
	for _, fams := range []map[string]*dto.MetricFamily{ready, drained} {
		for name, f := range fams {
			exported[name] = true
			if f.GetType() == dto.MetricType_HISTOGRAM {
				for _, s := range []string{"_bucket", "_sum", "_count"} {
					exported[name+s] = true
				}
			}
		}
	}

	alerts, err := os.ReadFile("../docs/observability/alerts.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, l := range strings.Split(string(alerts), "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			rules = append(rules, l)
		}
	}
	check(t, "docs/observability/alerts.yaml", strings.Join(rules, "\n"), exported)
	if n := strings.Count(string(alerts), "- alert: "); n < 3 {
		t.Errorf("alerts.yaml has %d alert rules, want the three of docs/observability.md", n)
	}

	raw, err := os.ReadFile("../docs/observability/dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dashboard any
	if err := json.Unmarshal(raw, &dashboard); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	var exprs []string
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if s, ok := x.(string); ok && k == "expr" {
					exprs = append(exprs, s)
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(dashboard)
	if len(exprs) == 0 {
		t.Fatal("dashboard.json has no query (no expr)")
	}
	check(t, "docs/observability/dashboard.json", strings.Join(exprs, "\n"), exported)

	// docs/observability.md lists the metrics: each exported one of
	// drainkit's own is there.
	page, err := os.ReadFile("../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range drained {
		if strings.HasPrefix(name, "drainkit_") && !strings.Contains(string(page), name) {
			t.Errorf("docs/observability.md does not list %s (%s)", name, f.GetHelp())
		}
	}
}

// check reports each metric name in text that exported lacks.
func check(t *testing.T, file, text string, exported map[string]bool) {
	t.Helper()
	used := metricName.FindAllString(text, -1)
	if len(used) == 0 {
		t.Errorf("%s uses no drainkit metric", file)
	}
	var served []string
	for n := range exported {
		if metricName.MatchString(n) {
			served = append(served, n)
		}
	}
	sort.Strings(served)
	for _, n := range used {
		if !exported[n] {
			t.Errorf("%s uses %s, which /metrics does not serve; it serves %s", file, n, strings.Join(served, ", "))
		}
	}
}
