package httpdrain_test

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
)

func TestSmokeHTTP1(t *testing.T) {
	in := start(t, timings(100*time.Millisecond, time.Second), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}), nil)
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	resp, err := c.Get(in.url("/"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok" || resp.Close {
		t.Fatalf("body %q close %v", b, resp.Close)
	}
	in.drain()
	// During the window: served, with Connection: close.
	resp, err = c.Get(in.url("/"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !resp.Close {
		t.Fatal("response during the window lacks Connection: close")
	}
	if err := in.wait(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	tl, _ := in.lc.Timeline()
	if tl.LateArrivals != 1 {
		t.Fatalf("late arrivals %d, want 1", tl.LateArrivals)
	}
}

// A listener that yields *tls.Conn cannot be tracked: Serve fails, so the
// process exits with code 1 at its first connection instead of draining
// wrongly.
func TestTLSListenerIsRejected(t *testing.T) {
	cert, _ := selfSigned(t)
	lc, err := lifecycle.New(lifecycle.Options{Logger: slog.New(slog.DiscardHandler), Timings: timings(0, time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := tls.NewListener(raw, &tls.Config{Certificates: []tls.Certificate{cert}})
	lc.AddServer("https", httpdrain.New(&http.Server{}, ln))
	runErr := make(chan error, 1)
	go func() { runErr <- lc.Run(context.Background()) }()
	c, err := net.Dial("tcp", raw.Addr().String())
	if err == nil {
		c.Close()
	}
	select {
	case err := <-runErr:
		if exitCode(err) != 1 || !strings.Contains(err.Error(), "plain listener") {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not fail")
	}
}
