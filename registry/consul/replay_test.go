package consul_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/internal/testpoll"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/consul/consultest"
	"github.com/hashicorp/consul/api"
)

// TestReplayedAnswerNeverReaddsDrainedInstance (issue 30 item 11): a proxy in
// front of the agent (as a caching proxy or a load balancer with a stale
// backend is) serves the consumer an answer it recorded before y was
// deregistered, a lower X-Consul-Index than the consumer's latest, five
// times. The consumer's view must never list y again and y must get no
// request while requests flow. Before the rule that tells a replay from an
// index reset, the replay started a new epoch: the consumer listed y again
// until the next answer (about 0.1s) and sent it requests.
//
// Then the agent restarts without its state (queries fail meanwhile) and
// the instances register again at indexes below the old ones: a genuine
// index reset, which the consumer must still follow.
func TestReplayedAnswerNeverReaddsDrainedInstance(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	const svc = "replay"
	x, y, z := newCountingBackend(t), newCountingBackend(t), newCountingBackend(t)
	raiseIndex(t, c, svc)
	registerPassing(t, c, svc, "x", x.port)
	registerPassing(t, c, svc, "y", y.port)

	rp := newReplayProxy(t, a.HTTPAddr, svc)
	w, lg, logs := watchThrough(t, a, rp.addr, svc)
	// The candidate views in order, and whether y came back after a view
	// without it.
	var (
		mu                    sync.Mutex
		views                 []string
		listed, removed, back bool
	)
	defer w.Subscribe(func(v registry.View) {
		mu.Lock()
		defer mu.Unlock()
		views = append(views, describe(v))
		has := v.Has("y")
		back = back || (removed && has)
		removed = removed || (listed && !has)
		listed = listed || has
	})()

	testpoll.Eventually(t, 10*time.Second, "the consumer lists x and y", lists(w, "x", "y"))
	old, ok := rp.lastAnswer()
	var entries []api.ServiceEntry
	if err := json.Unmarshal(old.body, &entries); !ok || err != nil || len(entries) != 2 {
		t.Fatalf("the proxy recorded no answer listing x and y (%t, %v): %s", ok, err, old.body)
	}
	if err := c.Agent().ServiceDeregister("y"); err != nil {
		t.Fatal(err)
	}
	testpoll.Eventually(t, 10*time.Second, "the consumer drops the deregistered y", lists(w, "x"))
	drained := w.Status()
	if drained.Revision <= old.index {
		t.Fatalf("the recorded answer's index %d is not below the consumer's %d: the test would not replay an older answer", old.index, drained.Revision)
	}
	t.Logf("recorded answer at index %d; y deregistered at index %d", old.index, drained.Revision)

	tr, err := consumer.NewTransport(w, "", consumer.Options{Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	load := startLoad(t, &http.Client{Transport: tr}, "http://"+svc+"/")

	const replays = 5
	rp.replay(old, replays)
	testpoll.Eventually(t, 20*time.Second, "the proxy served the recorded answer", func() (bool, string) {
		n := rp.served.Load()
		return n == replays, fmt.Sprintf("served %d of %d", n, replays)
	})
	// The agent's own answer after the last replay: the poller is past them.
	after := rp.forwarded.Load()
	testpoll.Eventually(t, 10*time.Second, "an answer of the agent after the replays", func() (bool, string) {
		return rp.forwarded.Load() > after, "no answer forwarded since the replays"
	})
	sent, failed := load.stop()
	mu.Lock()
	seq, readded := strings.Join(views, "\n"), back
	mu.Unlock()
	if toY := y.count.Load(); readded || toY != 0 {
		t.Fatalf("a replayed answer brought the drained y back: %d of %d requests reached it; the consumer's views:\n%s", toY, sent, seq)
	}
	if s := w.Status(); s.Epoch != drained.Epoch || s.Revision != drained.Revision {
		t.Fatalf("status after the replays %+v: want the epoch %d and revision %d of before", s, drained.Epoch, drained.Revision)
	}
	if x.count.Load() == 0 || failed != 0 {
		t.Fatalf("the load did not flow: %d sent, %d failed, %d reached x", sent, failed, x.count.Load())
	}
	t.Logf("%d requests completed during %d replays: x served %d, y none", sent, replays, x.count.Load())

	// A genuine index reset: a fresh agent, queries failing while it is
	// down. The consumer must see a failure before the new agent answers:
	// a restart quicker than its next query would be a reset without an
	// error (reset_test.go's case), and not the one this test is about.
	a.Stop()
	testpoll.Eventually(t, 20*time.Second, "a query fails while the agent is down", func() (bool, string) {
		return strings.Contains(logs.String(), "source failed"), "no failure logged yet"
	})
	a.Restart(t)
	registerPassing(t, c, svc, "x", x.port)
	registerPassing(t, c, svc, "z", z.port)
	_, meta, err := c.Health().Service(svc, "", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if meta.LastIndex >= drained.Revision {
		t.Fatalf("index after the restart %d is not below %d: the test did not exercise an index reset", meta.LastIndex, drained.Revision)
	}
	testpoll.Eventually(t, 20*time.Second, "the consumer follows the index reset", lists(w, "x", "z"))
	if s := w.Status(); s.Epoch <= drained.Epoch || s.Revision >= drained.Revision {
		t.Fatalf("status after the reset %+v: want an epoch above %d and a revision below %d", s, drained.Epoch, drained.Revision)
	}
	if !strings.Contains(logs.String(), "source failed") {
		t.Fatal("no query failed during the restart: the test did not exercise a reset after an error (reset_test.go has the one without)")
	}
}

// countingBackend is an HTTP server on 127.0.0.1 that counts its requests.
type countingBackend struct {
	port  int
	count atomic.Int64
}

func newCountingBackend(t *testing.T) *countingBackend {
	b := &countingBackend{}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) { b.count.Add(1) }))
	t.Cleanup(srv.Close)
	b.port = srv.Listener.Addr().(*net.TCPAddr).Port
	return b
}

// load sends GET requests one after another, paced, until stop.
type load struct {
	cancel       context.CancelFunc
	done         chan struct{}
	sent, failed int
}

// loadPace spaces the load's requests: enough to cover the 0.1s a replay
// used to last many times over, light on a busy machine.
const loadPace = 2 * time.Millisecond

func startLoad(t *testing.T, hc *http.Client, url string) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{cancel: cancel, done: make(chan struct{})}
	t.Cleanup(func() { l.stop() })
	go func() {
		defer close(l.done)
		tick := time.NewTicker(loadPace)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				panic(err)
			}
			resp, err := hc.Do(req)
			if ctx.Err() != nil {
				return
			}
			l.sent++
			if err != nil {
				l.failed++
				continue
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	return l
}

// stop ends the load and returns how many requests it sent and how many
// failed.
func (l *load) stop() (sent, failed int) {
	l.cancel()
	<-l.done
	return l.sent, l.failed
}

// recordedAnswer is one answer of the agent's health endpoint as the proxy
// forwarded it.
type recordedAnswer struct {
	status int
	header http.Header
	body   []byte
	index  uint64
}

// replayProxy is an HTTP proxy on 127.0.0.1 in front of a Consul agent that
// records the answers of /v1/health/service/<service> and, once told to,
// serves a recorded answer instead of the agent's, to the query in flight
// and the next ones, as a caching proxy replaying a stale entry does.
type replayProxy struct {
	addr      string
	served    atomic.Int64 // replays served
	forwarded atomic.Int64 // the agent's health answers forwarded

	path    string
	agent   string
	tr      *http.Transport
	replays chan recordedAnswer

	mu   sync.Mutex
	last *recordedAnswer
}

func newReplayProxy(t *testing.T, agent, service string) *replayProxy {
	p := &replayProxy{path: "/v1/health/service/" + service, agent: agent, tr: &http.Transport{},
		replays: make(chan recordedAnswer, 16)}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: agent})
	rp.Transport = p.tr
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path != p.path {
			rp.ServeHTTP(rw, r)
			return
		}
		p.health(rw, r)
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		p.tr.CloseIdleConnections()
	})
	p.addr = srv.Listener.Addr().String()
	return p
}

// health forwards a health query, unless a replay is due first: then the
// query to the agent is abandoned and the recorded answer served.
func (p *replayProxy) health(rw http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	done := make(chan *recordedAnswer, 1)
	go func() { done <- p.forward(ctx, r) }()
	var a *recordedAnswer
	select {
	case a = <-done:
		if a == nil {
			http.Error(rw, "agent unreachable", http.StatusBadGateway)
			return
		}
		if a.status == http.StatusOK {
			p.mu.Lock()
			p.last = a
			p.mu.Unlock()
			p.forwarded.Add(1)
		}
	case rec := <-p.replays:
		cancel()
		<-done
		a = &rec
		p.served.Add(1)
	}
	for k, v := range a.header {
		rw.Header()[k] = v
	}
	rw.WriteHeader(a.status)
	_, _ = rw.Write(a.body)
}

// forward sends r to the agent; nil if that failed.
func (p *replayProxy) forward(ctx context.Context, r *http.Request) *recordedAnswer {
	out := r.Clone(ctx)
	out.URL.Scheme, out.URL.Host, out.RequestURI = "http", p.agent, ""
	out.Header.Del("Accept-Encoding") // a plain body, to check and replay
	resp, err := p.tr.RoundTrip(out)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil
	}
	idx, _ := strconv.ParseUint(resp.Header.Get("X-Consul-Index"), 10, 64)
	return &recordedAnswer{status: resp.StatusCode, header: resp.Header.Clone(), body: body, index: idx}
}

// lastAnswer returns the agent's last successful health answer forwarded.
func (p *replayProxy) lastAnswer() (recordedAnswer, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		return recordedAnswer{}, false
	}
	return *p.last, true
}

// replay serves a to the next n health queries (the one in flight first).
func (p *replayProxy) replay(a recordedAnswer, n int) {
	for range n {
		p.replays <- a
	}
}
