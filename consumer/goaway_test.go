package consumer_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/registry"
)

// HTTP/2 providers: one shuts down gracefully (GOAWAY, then its listener
// closes) while requests run; none fails.
func TestHTTP2GoAwayHonoured(t *testing.T) {
	var srvs []*httptest.Server
	var ins []registry.Instance
	for _, name := range []string{"a", "b"} {
		s := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ProtoMajor != 2 {
				http.Error(w, "want HTTP/2", http.StatusHTTPVersionNotSupported)
				return
			}
			io.WriteString(w, name)
		}))
		s.EnableHTTP2 = true
		s.StartTLS()
		t.Cleanup(s.Close)
		b := &backend{Server: s, name: name}
		srvs, ins = append(srvs, s), append(ins, b.instance())
	}
	base := srvs[0].Client().Transport.(*http.Transport).Clone() // trusts the test certificate
	base.ForceAttemptHTTP2 = true
	_, tr, _ := newClient(t, consumer.StaticInstances("orders", ins), consumer.WatcherOptions{}, consumer.Options{Base: base})
	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	var failed, sent atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				sent.Add(1)
				resp, err := client.Get("https://orders/x")
				if err == nil {
					_, err = io.ReadAll(resp.Body)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						t.Errorf("status %d", resp.StatusCode)
					}
				}
				if err != nil {
					failed.Add(1)
					t.Errorf("request: %v", err)
				}
			}
		})
	}
	eventually(t, 5*time.Second, "load running", func() bool { return sent.Load() > 50 })
	sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer scancel()
	if err := srvs[0].Config.Shutdown(sctx); err != nil { // GOAWAY to its connections
		t.Errorf("shutdown: %v", err)
	}
	before := sent.Load()
	eventually(t, 5*time.Second, "load after the shutdown", func() bool { return sent.Load() > before+50 })
	cancel()
	wg.Wait()
	if failed.Load() != 0 {
		t.Errorf("%d of %d requests failed", failed.Load(), sent.Load())
	}
}
