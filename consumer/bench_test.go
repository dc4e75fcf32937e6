package consumer_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/drainkit/drainkit/consumer"
)

// BenchmarkRoundTripper measures the Transport's overhead against a bare
// http.Transport to the same loopback server, in the same run: /bare and
// /drainkit each send GETs and read the body; /drainkit also reports
// extra-ns/op, its time per request minus /bare's (target: at most 1µs and 2
// allocs/op more than /bare).
func BenchmarkRoundTripper(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	base := &http.Transport{MaxIdleConnsPerHost: 64}
	defer base.CloseIdleConnections()
	src, err := consumer.Static("orders", srv.Listener.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	w, err := consumer.NewWatcher(consumer.WatcherOptions{Source: src, Service: "orders"})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	tr, err := consumer.NewTransport(w, "", consumer.Options{Base: base})
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	bareReq, _ := http.NewRequest("GET", srv.URL+"/x", nil)
	dkReq, _ := http.NewRequest("GET", "http://orders/x", nil)
	var bare time.Duration
	b.Run("bare", func(b *testing.B) {
		run(b, base, bareReq)
		bare = b.Elapsed() / time.Duration(b.N)
	})
	b.Run("drainkit", func(b *testing.B) {
		run(b, tr, dkReq)
		if bare > 0 {
			b.ReportMetric(float64(b.Elapsed()/time.Duration(b.N)-bare), "extra-ns/op")
		}
	})
}

func run(b *testing.B, rt http.RoundTripper, req *http.Request) {
	b.ReportAllocs()
	buf := make([]byte, 64)
	for b.Loop() {
		resp, err := rt.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := resp.Body.Read(buf); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
		resp.Body.Close()
	}
}
