package middleware_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/internal/cpubench"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
)

// nopWriter is a reusable ResponseWriter that discards everything, so the
// benchmark measures the middleware, not a recorder.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *nopWriter) WriteHeader(int)             {}

var bare = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })

// drainkitHandler returns bare wrapped by httpdrain's request path, as
// httpdrain.New installs it on an http.Server (not serving: the lifecycle's
// ServerHooks, which Serve would hand it, are not called).
func drainkitHandler(b *testing.B) http.Handler {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	srv := &http.Server{Handler: bare}
	httpdrain.New(srv, ln)
	return srv.Handler
}

// perCore returns a copy of r on a memory page of its own. net/http
// allocates each request on the core that serves it, and httpdrain picks the
// request's in-flight stripe from the page of that allocation
// (syncx.StripeOf); one copy per benchmark goroutine, each on its own page,
// reproduces that without an allocation per request.
func perCore(r *http.Request) *http.Request {
	p := new(struct {
		_ [8192]byte
		r http.Request
	})
	p.r = *r
	return &p.r
}

// BenchmarkHandler compares the per-request cost of httpdrain's in-flight
// tracking with no middleware and with two common in-flight/telemetry
// middlewares, called through ServeHTTP on a reused request and writer.
func BenchmarkHandler(b *testing.B) {
	gauge := prometheus.NewGauge(prometheus.GaugeOpts{Name: "in_flight_requests"})
	cases := []struct {
		name string
		h    func(b *testing.B) http.Handler
	}{
		{"bare", func(*testing.B) http.Handler { return bare }},
		{"drainkit", drainkitHandler},
		{"promhttp_inflight", func(*testing.B) http.Handler { return promhttp.InstrumentHandlerInFlight(gauge, bare) }},
		{"otelhttp", func(*testing.B) http.Handler { return otelhttp.NewHandler(bare, "bench") }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			h := c.h(b)
			b.Run("seq", func(b *testing.B) {
				r := httptest.NewRequest(http.MethodGet, "/", nil)
				w := &nopWriter{h: http.Header{}}
				b.ReportAllocs()
				cpubench.Report(b, func() {
					for b.Loop() {
						h.ServeHTTP(w, r)
					}
				})
			})
			b.Run("parallel", func(b *testing.B) {
				b.ReportAllocs()
				cpubench.Report(b, func() {
					b.RunParallel(func(pb *testing.PB) {
						r := perCore(httptest.NewRequest(http.MethodGet, "/", nil))
						w := &nopWriter{h: http.Header{}}
						for pb.Next() {
							h.ServeHTTP(w, r)
						}
					})
				})
			})
		})
	}
}
