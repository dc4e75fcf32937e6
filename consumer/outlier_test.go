package consumer_test

import (
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainkit/drainkit/consumer"
)

// toggled returns a backend that cuts every request's connection while down
// is set (a connect-level failure) and answers otherwise.
func toggled(t *testing.T, name string, down *atomic.Bool) *backend {
	return newBackend(t, name, func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
			return
		}
		w.Write([]byte(name))
	})
}

// An ejected instance's share is spread over the remaining instances, not
// handed to its neighbour in the ring: with one of three ejected, the other
// two serve half each (it used to be 2/3 and 1/3).
func TestEjectedShareSpreadEvenly(t *testing.T) {
	a, b := newBackend(t, "a", nil), newBackend(t, "b", nil)
	dead := deadBackend(t, "c")
	f := newFeed()
	f.push(1, a, b, dead)
	_, tr, _ := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{
		Outlier: consumer.OutlierDetection{BaseEjectionTime: time.Minute}})
	eventually(t, 5*time.Second, "c ejected", func() bool { do(tr, "GET", ""); return tr.Status().Ejected == 1 })
	a.hits.Store(0)
	b.hits.Store(0)
	const n = 300
	for i := range n {
		if _, err := do(tr, "GET", ""); err != nil {
			t.Fatalf("GET %d: %v", i, err)
		}
	}
	for _, x := range []*backend{a, b} {
		if got := x.hits.Load(); got < n/2-10 || got > n/2+10 {
			t.Errorf("backend %s served %d of %d requests with c ejected, want %d±10 (a fair share)", x.name, got, n, n/2)
		}
	}
}

// A half-open probe that fails while the whole service is down (panic mode)
// neither doubles the ejection nor keeps the instance out once the service
// is back: the ejections of a whole-service outage end with it.
func TestOutageEjectionsEndWithTheOutage(t *testing.T) {
	var down atomic.Bool
	bs := []*backend{toggled(t, "a", &down), toggled(t, "b", &down), toggled(t, "c", &down)}
	f := newFeed()
	f.push(1, bs...)
	const base = time.Second
	_, tr, logs := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{
		Outlier: consumer.OutlierDetection{BaseEjectionTime: base},
		Budget:  consumer.RetryBudget{Percent: 100},
	})
	down.Store(true)
	eventually(t, 5*time.Second, "two ejected and panic mode", func() bool {
		do(tr, "GET", "")
		s := tr.Status()
		return s.Ejected == 2 && s.PanicMode
	})
	// Wait for the probes of the ejected two, which fail: the service is
	// still down.
	ejections := tr.Status().Ejections
	eventually(t, 5*base, "failed probes", func() bool { do(tr, "GET", ""); return tr.Status().Ejections >= ejections+2 })
	down.Store(false)
	start := time.Now()
	for i := range 20 {
		if _, err := do(tr, "GET", ""); err != nil && i > 0 {
			t.Fatalf("GET %d after the service recovered: %v", i, err)
		}
	}
	if s := tr.Status(); s.Ejected != 0 || s.PanicMode {
		t.Fatalf("%v after the service recovered: status %v, want nobody ejected and no panic mode (the outage's ejections end with it)\n%s",
			time.Since(start), s, logs)
	}
	for _, x := range bs {
		x.hits.Store(0)
	}
	for range 30 {
		do(tr, "GET", "")
	}
	for _, x := range bs {
		if x.hits.Load() != 10 {
			t.Errorf("backend %s served %d of 30 after the outage, want 10", x.name, x.hits.Load())
		}
	}
}
