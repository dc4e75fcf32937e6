package httpdrain_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
)

// TestAdd: the one-pass form adds the server to the lifecycle, which serves
// it once READY and drains it.
func TestAdd(t *testing.T) {
	lc, err := lifecycle.New(lifecycle.Options{Logger: slog.New(slog.DiscardHandler), Signals: []os.Signal{}, Timings: budget.Timings{WarmupTimeout: time.Second, DrainTimeout: time.Second, StopTimeout: time.Second, GracePeriod: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	lc.OnWarmup("ready", func(context.Context) error { close(ready); return nil })
	httpdrain.Add(lc, "http", &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "ok")
	})}, ln)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- lc.Run(ctx) }()
	<-ready
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	for deadline := time.Now().Add(10 * time.Second); lc.State() != lifecycle.Ready; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not READY within 10s")
		}
	}
	resp, err := client.Get("http://" + ln.Addr().String() + "/")
	if err != nil {
		t.Fatalf("GET: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok" {
		t.Errorf("body %q", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}
