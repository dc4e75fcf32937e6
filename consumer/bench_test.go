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
// /drainkit each send GETs and read the body (target: at most 1µs and 2
// allocs/op more than /bare); /drainkit also reports extra-ns/op, its time
// per request minus /bare's. On a busy machine the two runs see different
// noise; /interleaved alternates one bare and one drainkit request per
// iteration and reports extra-ns/op from the same moments.
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
	b.Run("interleaved", func(b *testing.B) {
		var tb, td time.Duration
		for b.Loop() {
			t0 := time.Now()
			once(b, base, bareReq)
			t1 := time.Now()
			once(b, tr, dkReq)
			tb, td = tb+t1.Sub(t0), td+time.Since(t1)
		}
		b.ReportMetric(float64(td-tb)/float64(b.N), "extra-ns/op")
	})
}

func run(b *testing.B, rt http.RoundTripper, req *http.Request) {
	b.ReportAllocs()
	for b.Loop() {
		once(b, rt, req)
	}
}

func once(b *testing.B, rt http.RoundTripper, req *http.Request) {
	var buf [64]byte
	resp, err := rt.RoundTrip(req)
	if err != nil {
		b.Fatal(err)
	}
	for {
		if _, err := resp.Body.Read(buf[:]); err == io.EOF {
			break
		} else if err != nil {
			b.Fatal(err)
		}
	}
	resp.Body.Close()
}
