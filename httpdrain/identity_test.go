package httpdrain_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/registry"
)

// WithIdentity names the instance on the first response of each
// connection, and only there: a connection has one peer.
func TestIdentityOnFirstResponseOfEachConnection(t *testing.T) {
	in := start(t, timings(0, time.Second), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}), nil, httpdrain.WithIdentity("orders", "orders-h-8080-abc"))
	get := func(c *http.Client) string {
		t.Helper()
		resp, err := c.Get(in.url("/"))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.Header.Get(registry.IdentityHeader)
	}
	for _, name := range []string{"first", "second"} {
		tr := &http.Transport{}
		c := &http.Client{Transport: tr}
		if got := get(c); got != "orders/orders-h-8080-abc" {
			t.Errorf("%s connection, first response: identity %q, want orders/orders-h-8080-abc", name, got)
		}
		for range 3 {
			if got := get(c); got != "" {
				t.Errorf("%s connection, later response: identity %q, want none", name, got)
			}
		}
		tr.CloseIdleConnections()
	}
	in.drain()
	if err := in.wait(5 * time.Second); err != nil {
		t.Fatal(err)
	}
}
