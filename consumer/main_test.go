package consumer_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/registry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testLogger returns a debug logger and its buffer, printed if t fails.
func testLogger(t *testing.T) (*slog.Logger, *testlog.Buffer) { return testlog.New(t, "consumer log") }

// backend is a real HTTP server on 127.0.0.1 that counts what it served.
type backend struct {
	*httptest.Server
	name string
	hits atomic.Int64
}

func newBackend(t *testing.T, name string, h http.HandlerFunc) *backend {
	return newBackendConnState(t, name, h, nil)
}

func newBackendConnState(t *testing.T, name string, h http.HandlerFunc, cs func(net.Conn, http.ConnState)) *backend {
	b := &backend{name: name}
	b.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.hits.Add(1)
		if h != nil {
			h(w, r)
			return
		}
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, name)
	}))
	b.Config.ConnState = cs
	b.Start()
	t.Cleanup(b.Close)
	return b
}

func (b *backend) instance() registry.Instance {
	host, port, _ := net.SplitHostPort(b.Listener.Addr().String())
	p, _ := strconv.Atoi(port)
	return registry.Instance{ID: b.name, Address: host, Port: p}
}

func (b *backend) addr() string { return b.Listener.Addr().String() }

// feed is a user-function source whose views the test pushes.
type feed struct {
	ch chan registry.View
}

func newFeed() *feed { return &feed{ch: make(chan registry.View, 16)} }

func (f *feed) Watch(ctx context.Context, fn func(registry.View)) error {
	for {
		select {
		case v := <-f.ch:
			fn(v)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (f *feed) push(rev uint64, bs ...*backend) { f.pushEpoch(0, rev, bs...) }

// pushEpoch pushes a view of epoch and rev listing bs.
func (f *feed) pushEpoch(epoch, rev uint64, bs ...*backend) { f.ch <- f.view(epoch, rev, bs...) }

// view returns a view of epoch and rev listing bs, received now.
func (f *feed) view(epoch, rev uint64, bs ...*backend) registry.View {
	ins := []registry.Instance{}
	for _, b := range bs {
		ins = append(ins, b.instance())
	}
	return registry.View{Service: "orders", Instances: ins, Epoch: epoch, Revision: rev, Received: time.Now(), Source: "feed"}
}

// newClient returns a watcher and transport over src for service "orders".
func newClient(t *testing.T, src registry.Source, wo consumer.WatcherOptions, o consumer.Options) (*consumer.Watcher, *consumer.Transport, *testlog.Buffer) {
	t.Helper()
	lg, buf := testLogger(t)
	wo.Source, wo.Service, wo.Logger, o.Logger = src, "orders", lg, lg
	w, err := consumer.NewWatcher(wo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	tr, err := consumer.NewTransport(w, "", o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	return w, tr, buf
}

// do sends one request through tr and reads the whole answer.
func do(tr http.RoundTripper, method, body string) (string, error) {
	var rd io.Reader
	if body != "" {
		rd = bytes.NewBufferString(body)
	}
	req, err := http.NewRequest(method, "http://orders/x", rd)
	if err != nil {
		return "", err
	}
	resp, err := (&http.Client{Transport: tr, Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("status %d", resp.StatusCode)
	}
	return string(b), err
}

// eventually polls cond every 20ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, timeout)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not synchronisation
	}
}

// deadAddr returns an address on 127.0.0.1 that refuses connections.
func deadBackend(t *testing.T, name string) *backend {
	b := newBackend(t, name, nil)
	b.Close()
	return b
}
