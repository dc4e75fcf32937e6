package httpdrain_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
)

// lbResult is what the stand-in load balancer saw of the drained instance.
type lbResult struct {
	sent, failed int64
	firstErr     error
}

// runLoadBalancer drains an instance behind a stand-in load balancer that
// probes readiness every 10 ms and keeps routing to the instance for 800 ms
// after readiness fails (a slow endpoint update), sending 100 requests/s over
// pooled keep-alive connections, as a proxy would.
func runLoadBalancer(t *testing.T, window time.Duration) lbResult {
	const (
		rate      = 10 * time.Millisecond // 100 requests/s
		staleness = 800 * time.Millisecond
	)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "other") }))
	defer other.Close()
	in := start(t, timings(window, time.Second), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond)
		io.WriteString(w, "instance")
	}), nil)

	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}

	var notReadySince atomic.Int64 // unix ns when the probe first saw not-ready
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(1)
	go func() { // readiness probe
		defer bg.Done()
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if in.lc.State() != lifecycle.Ready && notReadySince.Load() == 0 {
					notReadySince.Store(time.Now().UnixNano())
				}
			}
		}
	}()
	routeToInstance := func() bool {
		ns := notReadySince.Load()
		return ns == 0 || time.Since(time.Unix(0, ns)) < staleness
	}

	var (
		mu  sync.Mutex
		res lbResult
	)
	var reqs sync.WaitGroup
	send := func() {
		defer reqs.Done()
		toInstance := routeToInstance()
		url := other.URL
		if toInstance {
			url = in.url("/")
		}
		resp, err := client.Get(url)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode != http.StatusOK {
				err = errBadStatus
			}
		}
		if !toInstance {
			if err != nil {
				t.Errorf("request to the other instance failed: %v", err)
			}
			return
		}
		mu.Lock()
		res.sent++
		if err != nil {
			res.failed++
			if res.firstErr == nil {
				res.firstErr = err
			}
		}
		mu.Unlock()
	}

	tick := time.NewTicker(rate)
	defer tick.Stop()
	var drainAt time.Time
	for n := 0; ; n++ {
		<-tick.C
		if n == 50 { // 0.5 s of traffic, then the drain begins
			drainAt = time.Now()
			if err := in.lc.Drain("rolling restart"); err != nil {
				t.Fatal(err)
			}
		}
		if !drainAt.IsZero() && time.Since(drainAt) > staleness+window+300*time.Millisecond {
			break
		}
		reqs.Add(1)
		go send()
	}
	reqs.Wait()
	close(stop)
	bg.Wait()
	if err := in.wait(5 * time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// A load balancer that keeps routing for 800 ms after readiness turns 503:
// a 1 s window loses nothing; without a window requests fail, which shows
// that the window is what saves them.
func TestLoadBalancerPropagationWindow(t *testing.T) {
	t.Run("window=1s", func(t *testing.T) {
		r := runLoadBalancer(t, time.Second)
		t.Logf("sent %d to the instance, %d failed", r.sent, r.failed)
		if r.failed != 0 {
			t.Fatalf("%d of %d requests failed with a 1s window; first: %v", r.failed, r.sent, r.firstErr)
		}
		if r.sent < 100 {
			t.Fatalf("only %d requests reached the instance", r.sent)
		}
	})
	t.Run("window=0", func(t *testing.T) {
		r := runLoadBalancer(t, 0)
		t.Logf("sent %d to the instance, %d failed; first: %v", r.sent, r.failed, r.firstErr)
		if r.failed < 20 {
			t.Fatalf("only %d of %d requests failed without a window; expected the 800 ms of stale routing to fail", r.failed, r.sent)
		}
	})
}
