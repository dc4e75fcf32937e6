package consul_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/testpoll"
	"github.com/drainkit/drainkit/registry/consul/consultest"
)

// TestConsumerFollowsIndexReset (issue 18 item 5): the agent behind the
// consumer's address restarts without its state, so Consul's index starts
// again far below the last one the consumer saw, and no query fails in
// between (a load balancer in front of the agent holds the queries while it
// restarts, as one in front of Consul servers does while a server is
// replaced). The instances register again, then one is deregistered at an
// index still below the old one: the consumer must drop it from its view.
// Before views carried an Epoch, consumer.Watcher dropped every view below
// the old index and kept sending to the deregistered instance.
func TestConsumerFollowsIndexReset(t *testing.T) {
	a := consultest.Start(t)
	const svc = "reset"
	c := a.Client(t)
	registerPassing(t, c, svc, "x", 18201)
	registerPassing(t, c, svc, "y", 18202)
	raiseIndex(t, c, svc)

	lb := newHoldingProxy(t, a.HTTPAddr)
	w, _, logs := watchThrough(t, a, lb.addr, svc)
	testpoll.Eventually(t, 10*time.Second, "the consumer lists x and y", lists(w, "x", "y"))
	before := w.Status()
	t.Logf("index before the restart: %d", before.Revision)

	// Hold new queries at the load balancer and let the one in flight end
	// (its WaitTime is 5s), so that no query sees the agent down. The held
	// query's own bound (WaitTime + 5s) leaves the restart about 10s.
	lb.hold()
	testpoll.Eventually(t, 10*time.Second, "no query in flight to the old agent", lb.idle)
	a.Restart(t)
	registerPassing(t, c, svc, "x", 18201)
	registerPassing(t, c, svc, "y", 18202)
	lb.release()

	if err := c.Agent().ServiceDeregister("y"); err != nil {
		t.Fatal(err)
	}
	_, meta, err := c.Health().Service(svc, "", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if meta.LastIndex >= before.Revision {
		t.Fatalf("index after the deregistration %d is not below %d: the test did not exercise an index reset", meta.LastIndex, before.Revision)
	}
	t.Logf("index after the restart and the deregistration: %d", meta.LastIndex)

	testpoll.Eventually(t, 20*time.Second, "the deregistration after the index reset reaches the consumer", lists(w, "x"))
	s := w.Status()
	if s.Epoch != before.Epoch+1 || s.Revision >= before.Revision || s.Restarts != 0 || s.Err != nil {
		t.Fatalf("status %+v: want epoch %d, a revision below %d, no restart and no error", s, before.Epoch+1, before.Revision)
	}
	if l := logs.String(); strings.Contains(l, "source failed") {
		t.Fatalf("a query failed during the restart, so the test did not exercise a reset without an error:\n%s", l)
	}
}

// holdingProxy is an HTTP reverse proxy on 127.0.0.1 in front of a Consul
// agent, as a load balancer in front of Consul is: hold makes it wait with
// new requests until release, while those already forwarded finish.
type holdingProxy struct {
	addr string
	tr   *http.Transport

	mu      sync.Mutex
	held    chan struct{} // non-nil while holding; closed by release
	forward int           // requests being forwarded
}

func newHoldingProxy(t *testing.T, agent string) *holdingProxy {
	p := &holdingProxy{tr: &http.Transport{}}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: agent})
	rp.Transport = p.tr
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if !p.enter(r.Context()) {
			return
		}
		defer p.leave()
		rp.ServeHTTP(rw, r)
	}))
	t.Cleanup(func() {
		p.release()
		srv.CloseClientConnections()
		srv.Close()
		p.tr.CloseIdleConnections()
	})
	p.addr = srv.Listener.Addr().String()
	return p
}

func (p *holdingProxy) enter(ctx context.Context) bool {
	for {
		p.mu.Lock()
		held := p.held
		if held == nil {
			p.forward++
			p.mu.Unlock()
			return true
		}
		p.mu.Unlock()
		select {
		case <-held:
		case <-ctx.Done():
			return false
		}
	}
}

func (p *holdingProxy) leave() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.forward--
}

func (p *holdingProxy) hold() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held == nil {
		p.held = make(chan struct{})
	}
}

// release forwards the held requests, on new connections to the agent.
func (p *holdingProxy) release() {
	p.tr.CloseIdleConnections()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held != nil {
		close(p.held)
		p.held = nil
	}
}

func (p *holdingProxy) idle() (bool, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.forward == 0, fmt.Sprintf("%d request(s) being forwarded", p.forward)
}
