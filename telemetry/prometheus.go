package telemetry

import (
	"context"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// Prometheus is a MeterProvider whose metrics, together with the Go runtime
// and process collectors, are served in the Prometheus text format by
// Handler. It uses its own registry, not prometheus.DefaultRegisterer.
type Prometheus struct {
	provider *sdkmetric.MeterProvider
	handler  http.Handler
}

// NewPrometheus creates the OpenTelemetry Prometheus exporter on a new
// registry and a MeterProvider reading through it. Pass MeterProvider() to
// New (and, if you like, to otel.SetMeterProvider), and mount Handler() at
// GET /metrics on the admin listener. It returns the exporter's or the
// registry's error.
func NewPrometheus() (*Prometheus, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return nil, err
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, err
	}
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	p := &Prometheus{provider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))}
	metrics := promhttp.HandlerFor(reg, promhttp.HandlerOpts{MaxRequestsInFlight: 4})
	p.handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		metrics.ServeHTTP(w, r)
	})
	return p, nil
}

// MeterProvider returns the provider whose instruments Handler serves.
func (p *Prometheus) MeterProvider() *sdkmetric.MeterProvider { return p.provider }

// Handler serves the metrics for GET and HEAD (405 otherwise). Each request
// collects the observable instruments, reading the lifecycle at that moment.
func (p *Prometheus) Handler() http.Handler { return p.handler }

// Shutdown shuts the MeterProvider down; Handler then serves only the Go and
// process metrics.
func (p *Prometheus) Shutdown(ctx context.Context) error { return p.provider.Shutdown(ctx) }
