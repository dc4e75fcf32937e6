package httpdrain_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/registry"
)

// WithIdentity names the instance on every response, whatever the protocol:
// sequential responses on one HTTP/1.1 keep-alive connection, and 20
// concurrent streams on one HTTP/2 connection (TLS and h2c), each of which
// a consumer checks on its own.
func TestIdentityOnEveryResponse(t *testing.T) {
	const want = "orders/orders-h-8080-abc"
	setups := append([]h2Setup{{"http1", func(t *testing.T, srv *http.Server) (*http.Client, func() net.Conn) {
		return &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}, nil
	}}}, h2Setups...)
	for _, setup := range setups {
		t.Run(setup.name, func(t *testing.T) {
			const n = 20
			h2 := setup.name != "http1"
			var conns atomic.Int64
			arrived := make(chan struct{}, n)
			all := make(chan struct{})
			var client *http.Client
			scheme := "http"
			in := start(t, timings(0, 5*time.Second), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/hold" {
					// Hold every stream until all n are open: they share the
					// connection at once.
					arrived <- struct{}{}
					select {
					case <-all:
					case <-time.After(10 * time.Second):
						t.Error("the 20 streams never were open together")
					}
				}
				io.WriteString(w, "ok")
			}), func(srv *http.Server) {
				client, _ = setup.configure(t, srv)
				if srv.TLSConfig != nil {
					scheme = "https"
				}
				srv.ConnState = func(_ net.Conn, s http.ConnState) {
					if s == http.StateNew {
						conns.Add(1)
					}
				}
			}, httpdrain.WithIdentity("orders", "orders-h-8080-abc"))
			defer client.CloseIdleConnections()
			get := func(path string) (string, error) {
				resp, err := client.Get(scheme + "://" + in.addr + path)
				if err != nil {
					return "", err
				}
				defer resp.Body.Close()
				if proto := resp.ProtoMajor; (proto == 2) != h2 {
					t.Errorf("response over HTTP/%d", proto)
				}
				_, err = io.Copy(io.Discard, resp.Body)
				return resp.Header.Get(registry.IdentityHeader), err
			}
			if !h2 {
				for i := range n {
					if got, err := get("/"); err != nil || got != want {
						t.Errorf("response %d: identity %q (%v), want %q", i, got, err, want)
					}
				}
			} else {
				// One stream first, so that the connection exists and the
				// concurrent ones share it rather than race to dial.
				if got, err := get("/"); err != nil || got != want {
					t.Fatalf("first response: identity %q (%v), want %q", got, err, want)
				}
				var wg sync.WaitGroup
				missing := atomic.Int64{}
				for range n {
					wg.Go(func() {
						if got, err := get("/hold"); err != nil || got != want {
							missing.Add(1)
							t.Errorf("concurrent response: identity %q (%v), want %q", got, err, want)
						}
					})
				}
				for range n {
					<-arrived
				}
				close(all)
				wg.Wait()
				if m := missing.Load(); m != 0 {
					t.Errorf("%d of %d concurrent HTTP/2 responses lacked the identity", m, n)
				}
			}
			if c := conns.Load(); c != 1 {
				t.Errorf("%d connections, want 1 (all responses on one connection)", c)
			}
			in.drain()
			if err := in.wait(10 * time.Second); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The identity costs the request path no allocation: the value slice is
// shared by every response.
func TestIdentityAllocatesNothing(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })}
	httpdrain.New(srv, ln, httpdrain.WithIdentity("orders", "orders-1"))
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	w := &nopWriter{h: http.Header{"Content-Type": {"text/plain"}}} // a handler's usual header: the map exists
	if n := testing.AllocsPerRun(1000, func() { srv.Handler.ServeHTTP(w, r) }); n != 0 {
		t.Errorf("%v allocations per request with WithIdentity, want 0", n)
	}
	if got := w.Header().Get(registry.IdentityHeader); got != "orders/orders-1" {
		t.Errorf("identity %q, want orders/orders-1", got)
	}
}

// nopWriter is a reusable ResponseWriter that discards everything.
type nopWriter struct{ h http.Header }

func (w *nopWriter) Header() http.Header         { return w.h }
func (w *nopWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *nopWriter) WriteHeader(int)             {}
