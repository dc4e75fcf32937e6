package consumer_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
)

// identified returns a backend that names itself as service/name in the
// identity header, as a provider built on drainkit does.
func identified(t *testing.T, service, name string) *backend {
	return newBackend(t, name, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(registry.IdentityHeader, service+"/"+name)
		io.Copy(io.Discard, r.Body)
		w.Write([]byte(service))
	})
}

// An address of the view now served by another service: none of its
// answers is returned and it is ejected at its first answer. The request
// it answered is sent again, to the right service, only if it is
// idempotent (a GET, a POST with an Idempotency-Key): the other service
// may have run it. A plain POST it answered fails with ErrWrongService and
// is not sent again.
func TestWrongServiceNeverAnswers(t *testing.T) {
	cases := []struct {
		name   string
		method string
		key    bool
		resent bool
	}{
		{"GET", "GET", false, true},
		{"POST with Idempotency-Key", "POST", true, true},
		{"POST", "POST", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			orders, payments := identified(t, "orders", "o1"), identified(t, "payments", "p1")
			f := newFeed()
			f.push(1, orders, payments)
			_, tr, logs := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{
				Outlier: consumer.OutlierDetection{BaseEjectionTime: time.Minute}})
			send := func() (string, error) {
				req, err := http.NewRequest(c.method, "http://orders/x", strings.NewReader("order 42"))
				if err != nil {
					t.Fatal(err)
				}
				if c.key {
					req.Header.Set("Idempotency-Key", "k42")
				}
				resp, err := tr.RoundTrip(req)
				if err != nil {
					return "", err
				}
				defer resp.Body.Close()
				b, err := io.ReadAll(resp.Body)
				return string(b), err
			}
			// Round robin reaches payments within two requests.
			sent := 0
			for payments.hits.Load() == 0 {
				if sent == 2 {
					t.Fatal("payments not reached in 2 requests")
				}
				before := orders.hits.Load()
				body, err := send()
				sent++
				reached := payments.hits.Load() == 1
				switch {
				case !reached && (err != nil || body != "orders"):
					t.Fatalf("request %d to orders: %q, %v", sent, body, err)
				case reached && c.resent && (err != nil || body != "orders" || orders.hits.Load() != before+1):
					t.Fatalf("request payments answered: %q, %v, orders served it %d times; want it sent again to orders",
						body, err, orders.hits.Load()-before)
				case reached && !c.resent && (!errors.Is(err, consumer.ErrWrongService) || orders.hits.Load() != before):
					t.Fatalf("request payments answered: %q, %v, orders served it %d times; want ErrWrongService and not sent again (payments ran it)",
						body, err, orders.hits.Load()-before)
				}
			}
			for i := range 10 {
				if body, err := send(); err != nil || body != "orders" {
					t.Fatalf("request %d after the ejection: %q, %v; want orders' answer", i, body, err)
				}
			}
			s := tr.Status()
			if payments.hits.Load() != 1 || s.WrongService != 1 || s.Ejections != 1 || s.Ejected != 1 {
				t.Errorf("payments served %d, status %v: want 1 answer discarded, the address ejected at once", payments.hits.Load(), s)
			}
			if !strings.Contains(logs.String(), "instance ejected") {
				t.Error("the ejection was not logged")
			}
		})
	}
}

// With the wrong service alone, the caller gets an error, never its answer.
func TestWrongServiceAloneFails(t *testing.T) {
	payments := identified(t, "payments", "p1")
	f := newFeed()
	f.push(1, payments)
	_, tr, _ := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{})
	req, _ := http.NewRequestWithContext(context.Background(), "GET", "http://orders/x", nil)
	resp, err := tr.RoundTrip(req)
	if !errors.Is(err, consumer.ErrWrongService) || resp != nil {
		t.Errorf("RoundTrip to payments alone: %v, %v; want ErrWrongService and no response", resp, err)
	}
}

// noHooks is the lifecycle.ServerHooks of an httpdrain server the test
// serves without a lifecycle.
type noHooks struct{}

func (noHooks) Arrived(lifecycle.Caller) {}
func (noHooks) CancelledEarly()          {}

// An address of the view now served by another drainkit service over
// HTTP/2 (unencrypted, prior knowledge): 20 concurrent requests on one
// connection, each answered on its own stream by payments, which names
// itself on every response (httpdrain.WithIdentity). Not one of them
// reaches the caller as an answer: each is detected, and fails with
// ErrWrongService (payments is the only instance).
func TestWrongServiceOverHTTP2(t *testing.T) {
	const n = 20
	var conns atomic.Int64
	arrived := make(chan struct{}, n)
	all := make(chan struct{})
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ProtoMajor != 2 {
				t.Errorf("request over HTTP/%d", r.ProtoMajor)
			}
			// Hold every stream until all n are open: they share the
			// connection at once.
			arrived <- struct{}{}
			select {
			case <-all:
			case <-time.After(10 * time.Second):
				t.Error("the streams never were open together")
			}
			io.WriteString(w, "payments")
		}),
		ReadHeaderTimeout: 5 * time.Second,
		Protocols:         new(http.Protocols),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		},
	}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := httpdrain.New(srv, ln, httpdrain.WithIdentity("payments", "p1"), httpdrain.WithNewConnGrace(0))
	served := make(chan error, 1)
	go func() { served <- hs.Serve(noHooks{}) }()
	defer func() {
		hs.LameDuck()
		hs.CloseListeners()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := hs.AwaitIdle(ctx); err != nil {
			t.Error(err)
		}
		if err := <-served; err != nil {
			t.Error(err)
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	base := &http.Transport{Protocols: new(http.Protocols), MaxConnsPerHost: 1} // one dial at a time: the streams share its connection
	base.Protocols.SetUnencryptedHTTP2(true)
	_, tr, _ := newClient(t, consumer.StaticInstances("orders", []registry.Instance{{ID: "o1", Address: "127.0.0.1", Port: port}}),
		consumer.WatcherOptions{}, consumer.Options{Base: base})
	var answered, detected atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			req, _ := http.NewRequest("GET", "http://orders/x", nil)
			resp, err := tr.RoundTrip(req)
			switch {
			case err == nil:
				answered.Add(1)
				resp.Body.Close()
			case errors.Is(err, consumer.ErrWrongService):
				detected.Add(1)
			default:
				t.Errorf("request %d: %v", i, err)
			}
		})
	}
	for range n {
		<-arrived
	}
	close(all)
	wg.Wait()
	if answered.Load() != 0 || detected.Load() != n {
		t.Errorf("%d of %d answers from payments reached the caller, %d detected; want 0 and %d", answered.Load(), n, detected.Load(), n)
	}
	if c := conns.Load(); c != 1 {
		t.Errorf("%d connections, want 1 (all %d streams on one)", c, n)
	}
	if s := tr.Status(); s.WrongService != n {
		t.Errorf("status %v: want %d answers discarded", s, n)
	}
}
