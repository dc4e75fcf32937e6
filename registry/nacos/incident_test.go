package nacos_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	gosync "sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/registry/nacos"
)

// TestIncidentOfflineThenKill9 reproduces the first incident behind
// drainkit: an operator marks an instance offline in the console, then
// kill -9s it, while consumers call the service at 300 requests/s. A naive
// consumer (a 1.x client: the open API's healthy list polled every 5 s,
// round robin, no retry) fails requests until its next poll; a consumer on
// package consumer fed by nacos.NewSource fails none.
func TestIncidentOfflineThenKill9(t *testing.T) {
	const svc = "incident-svc"
	a := startChild(t, "--registry-service", svc)
	b := startChild(t, "--registry-service", svc)
	aPort := childPort(t, a)
	waitList(t, consumerList, svc, aPort, "a listed", func(_ instance, ok bool) bool { return ok })
	waitList(t, consumerList, svc, childPort(t, b), "b listed", func(_ instance, ok bool) bool { return ok })

	w, err := consumer.NewWatcher(consumer.WatcherOptions{Service: svc,
		Source: nacos.NewSource(svc, nacos.WatchOptions{Server: nacos.Server{Addrs: []string{srv.Addr}}, SDKDir: t.TempDir()})})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tr, err := consumer.NewTransport(w, "", consumer.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	dk := &http.Client{Transport: tr, Timeout: 2 * time.Second}

	naive := newNaiveConsumer(t, svc, 5*time.Second)
	defer naive.stop()

	const rate, run = 300, 9 * time.Second
	var dkFail, naiveFail, sent atomic.Int64
	var wg gosync.WaitGroup
	tick := time.NewTicker(time.Second / rate)
	defer tick.Stop()
	start := time.Now()
	offlineAt, killAt := 2*time.Second, 2500*time.Millisecond
	offlined, killed := false, false
	for time.Since(start) < run {
		<-tick.C
		el := time.Since(start)
		if !offlined && el >= offlineAt {
			offlined = true
			setEnabled(t, svc, aPort, false) // the console's offline (the ticker drops the ticks it takes)
		}
		if !killed && el >= killAt {
			killed = true
			a.Signal(syscall.SIGKILL)
		}
		sent.Add(1)
		wg.Add(2)
		go func() {
			defer wg.Done()
			if !get(dk, "http://"+svc+"/") {
				dkFail.Add(1)
			}
		}()
		go func() {
			defer wg.Done()
			if !naive.get() {
				naiveFail.Add(1)
			}
		}()
	}
	wg.Wait()
	t.Logf("console offline at %s, kill -9 at %s, %d requests each at %d/s: drainkit consumer failed %d, naive consumer (5 s poll) failed %d",
		offlineAt, killAt, sent.Load(), rate, dkFail.Load(), naiveFail.Load())
	if dkFail.Load() != 0 {
		t.Fatalf("the drainkit consumer failed %d requests", dkFail.Load())
	}
	if naiveFail.Load() == 0 {
		t.Fatal("the naive consumer failed no request: the incident was not reproduced")
	}
}

// get sends GET url and reports a 200.
func get(c *http.Client, u string) bool {
	resp, err := c.Get(u)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// naiveConsumer is a Nacos 1.x style client: it polls the open API's
// healthy instance list every interval and sends each request to the next
// address, round robin, without retry.
type naiveConsumer struct {
	hc    *http.Client
	mu    gosync.Mutex
	addrs []string
	next  int
	quit  chan struct{}
	done  chan struct{}
}

func newNaiveConsumer(t *testing.T, svc string, every time.Duration) *naiveConsumer {
	n := &naiveConsumer{hc: &http.Client{Timeout: 2 * time.Second}, quit: make(chan struct{}), done: make(chan struct{})}
	poll := func() {
		l, err := consumerList(svc)
		if err != nil {
			return // keeps the old list, as such clients do
		}
		var addrs []string
		for _, in := range l {
			addrs = append(addrs, (&url.URL{Host: in.IP + ":" + strconv.Itoa(in.Port)}).Host)
		}
		n.mu.Lock()
		n.addrs = addrs
		n.mu.Unlock()
	}
	poll()
	go func() {
		defer close(n.done)
		tk := time.NewTicker(every)
		defer tk.Stop()
		for {
			select {
			case <-n.quit:
				return
			case <-tk.C:
				poll()
			}
		}
	}()
	return n
}

func (n *naiveConsumer) get() bool {
	n.mu.Lock()
	if len(n.addrs) == 0 {
		n.mu.Unlock()
		return false
	}
	addr := n.addrs[n.next%len(n.addrs)]
	n.next++
	n.mu.Unlock()
	return get(n.hc, "http://"+addr+"/")
}

func (n *naiveConsumer) stop() {
	close(n.quit)
	<-n.done
	n.hc.CloseIdleConnections()
}
