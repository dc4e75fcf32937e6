package httpdrain_test

import (
	"context"
	"fmt"
	"github.com/drainkit/drainkit/internal/drainsteps"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
)

// quiescenceWorkload starts `requests` concurrent requests whose handlers take
// 5..5+requests*3 ms, and returns once all handlers are running. lastEnd
// receives the time the last handler returned (unix ns).
type quiescenceWorkload struct {
	requests int
	started  sync.WaitGroup
	lastEnd  atomic.Int64
	clients  sync.WaitGroup
}

func (q *quiescenceWorkload) handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/idle" { // holdIdle's first request on each idle connection
			return
		}
		d, _ := time.ParseDuration(r.URL.Query().Get("d"))
		q.started.Done()
		time.Sleep(d)
		io.WriteString(w, "done")
		for { // record the latest handler end
			now, cur := time.Now().UnixNano(), q.lastEnd.Load()
			if now <= cur || q.lastEnd.CompareAndSwap(cur, now) {
				break
			}
		}
	})
}

func (q *quiescenceWorkload) run(b *testing.B, addr string, tr *http.Transport) {
	q.started.Add(q.requests)
	for i := 0; i < q.requests; i++ {
		q.clients.Add(1)
		d := time.Duration(5+3*i) * time.Millisecond
		go func() {
			defer q.clients.Done()
			resp, err := (&http.Client{Transport: tr}).Get("http://" + addr + "/?d=" + d.String())
			if err != nil {
				b.Errorf("request: %v", err)
				q.started.Done()
				return
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err != nil {
				b.Errorf("response: %v", err)
			}
		}()
	}
	q.started.Wait()
}

// reportLags reports the median and 90th percentile of lags.
func reportLags(b *testing.B, lags []time.Duration) {
	slices.Sort(lags)
	b.ReportMetric(float64(lags[len(lags)/2].Microseconds()), "µs-median-lag")
	b.ReportMetric(float64(lags[len(lags)*9/10].Microseconds()), "µs-p90-lag")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkQuiescence measures how long after the last in-flight request
// finishes (its handler returns) the drain is over, with 0, 1,000 and 10,000
// idle keep-alive connections open (held by a child process, see holdIdle),
// on the same workload (8 concurrent requests of 5-26 ms in flight when the
// listener closes):
//
//   - idle=N/drainkit: httpdrain's LameDuck, CloseListeners, AwaitIdle; the
//     lag to AwaitIdle's return (µs-median-lag, µs-p90-lag) and to Serve's
//     return (µs-median-serve-lag), which also waits for the connections to
//     be closed;
//   - idle=N/drainkit_lifecycle: a lifecycle drain, to its "idle" step;
//   - idle=N/shutdown: plain http.Server.Shutdown, to its return.
//
// Run: go test -run '^$' -bench Quiescence -benchtime 5x ./httpdrain
// (make bench). Target: drainkit's median lag under 1 ms at every size.
func BenchmarkQuiescence(b *testing.B) {
	for _, idle := range []int{0, 1000, 10000} {
		b.Run(fmt.Sprintf("idle=%d", idle), func(b *testing.B) {
			b.Run("drainkit", func(b *testing.B) { benchQuiescenceDrainkit(b, idle) })
			b.Run("drainkit_lifecycle", func(b *testing.B) { benchQuiescenceLifecycle(b, idle) })
			b.Run("shutdown", func(b *testing.B) { benchQuiescenceShutdown(b, idle) })
		})
	}
}

const quiescenceRequests = 8

func listenBench(b *testing.B) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	return ln
}

func benchQuiescenceDrainkit(b *testing.B, idle int) {
	var lags, serveLags []time.Duration
	for b.Loop() {
		q := &quiescenceWorkload{requests: quiescenceRequests}
		ln := listenBench(b)
		hs := httpdrain.New(&http.Server{Handler: q.handler()}, ln)
		served := make(chan error, 1)
		go func() { served <- hs.Serve(httpdrain.NoHooks) }()
		release := holdIdle(b, ln.Addr().String(), idle)
		tr := &http.Transport{}
		q.run(b, ln.Addr().String(), tr)
		hs.LameDuck()
		if err := hs.CloseListeners(); err != nil {
			b.Fatal(err)
		}
		if err := hs.AwaitIdle(context.Background()); err != nil {
			b.Fatal(err)
		}
		lags = append(lags, time.Since(time.Unix(0, q.lastEnd.Load())))
		if err := <-served; err != nil {
			b.Fatal(err)
		}
		serveLags = append(serveLags, time.Since(time.Unix(0, q.lastEnd.Load())))
		q.clients.Wait()
		release()
		tr.CloseIdleConnections()
	}
	reportLags(b, lags)
	slices.Sort(serveLags)
	b.ReportMetric(float64(serveLags[len(serveLags)/2].Microseconds()), "µs-median-serve-lag")
}

func benchQuiescenceLifecycle(b *testing.B, idle int) {
	var lags []time.Duration
	for b.Loop() {
		rec := drainsteps.New()
		lc, err := lifecycle.New(lifecycle.Options{Logger: slog.New(slog.DiscardHandler), Timings: timings(0, 5*time.Second), Observers: []lifecycle.Observer{rec}})
		if err != nil {
			b.Fatal(err)
		}
		q := &quiescenceWorkload{requests: quiescenceRequests}
		ln := listenBench(b)
		lc.AddServer("http", httpdrain.New(&http.Server{Handler: q.handler()}, ln))
		sub, unsubscribe := lc.Subscribe()
		runErr := make(chan error, 1)
		go func() { runErr <- lc.Run(context.Background()) }()
		for lc.State() != lifecycle.Ready {
			<-sub
		}
		unsubscribe()
		release := holdIdle(b, ln.Addr().String(), idle)
		tr := &http.Transport{}
		q.run(b, ln.Addr().String(), tr)
		_ = lc.Drain("benchmark")
		if err := <-runErr; err != nil {
			b.Fatal(err)
		}
		idleAt, ok := rec.Time(lifecycle.StepIdle)
		if !ok {
			b.Fatal("no idle step")
		}
		lags = append(lags, idleAt.Sub(time.Unix(0, q.lastEnd.Load())))
		q.clients.Wait()
		release()
		tr.CloseIdleConnections()
	}
	reportLags(b, lags)
}

func benchQuiescenceShutdown(b *testing.B, idle int) {
	var lags []time.Duration
	for b.Loop() {
		q := &quiescenceWorkload{requests: quiescenceRequests}
		ln := listenBench(b)
		srv := &http.Server{Handler: q.handler()}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(ln) }()
		release := holdIdle(b, ln.Addr().String(), idle)
		tr := &http.Transport{}
		q.run(b, ln.Addr().String(), tr)
		if err := srv.Shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
		lags = append(lags, time.Since(time.Unix(0, q.lastEnd.Load())))
		q.clients.Wait()
		<-served
		release()
		tr.CloseIdleConnections()
	}
	reportLags(b, lags)
}
