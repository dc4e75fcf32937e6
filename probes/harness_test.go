package probes_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/lifecycle/lifecycletest"
	"github.com/drainkit/drainkit/probes"
)

// testTimings: no propagation window, generous drain budget.
func testTimings() budget.Timings {
	return budget.Timings{
		WarmupTimeout: 5 * time.Second,
		DrainTimeout:  5 * time.Second,
		StopTimeout:   time.Second,
		GracePeriod:   15 * time.Second,
	}
}

// harness is a lifecycle with a gate server and a probes.Handler served on a
// real 127.0.0.1 socket.
type harness struct {
	lc     *lifecycle.Lifecycle
	window *windowObserver
	gate   func() // ends the request the server holds in flight, so the lifecycle stays in DRAINING until then
	h      *probes.Handler
	srv    *httptest.Server
	runErr chan error
}

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newHarness builds the harness with lopts, whose zero timings become
// testTimings; its lifecycle logs nowhere and handles SIGUSR2 only, which
// is never sent: the test binary's SIGTERM stays alone.
func newHarness(t *testing.T, popts probes.Options, lopts lifecycle.Options) *harness {
	t.Helper()
	window := &windowObserver{ended: make(chan struct{})}
	lopts.Observers = append([]lifecycle.Observer{window}, lopts.Observers...)
	if lopts.Timings == (budget.Timings{}) {
		lopts.Timings = testTimings()
	}
	lopts.Logger = quietLogger()
	lopts.Signals = []os.Signal{syscall.SIGUSR2}
	lc, err := lifecycle.New(lopts)
	if err != nil {
		t.Fatal(err)
	}
	if popts.Logger == nil {
		popts.Logger = quietLogger()
	}
	h, err := probes.New(lc, popts)
	if err != nil {
		t.Fatal(err)
	}
	srv := lifecycletest.NewServer()
	hs := &harness{lc: lc, window: window, gate: srv.Begin(), h: h, srv: httptest.NewServer(h)}
	lc.AddServer("gate", srv)
	t.Cleanup(func() {
		hs.stop(t)
		hs.srv.Close()
		_ = h.Close()
	})
	return hs
}

// run starts lc.Run and waits for READY.
func (hs *harness) run(t *testing.T) {
	t.Helper()
	hs.runErr = make(chan error, 1)
	go func() { hs.runErr <- hs.lc.Run(context.Background()) }()
	// Run reaches READY first, but a failing check with a short interval
	// ejects it moments later: a loaded machine's poll can miss READY, so
	// wait for STARTING to end.
	deadline := time.Now().Add(5 * time.Second)
	for hs.lc.State() == lifecycle.Starting {
		if time.Now().After(deadline) {
			t.Fatalf("state %s within 5s, want past STARTING", hs.lc.State())
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// stop ends the drain (if Run was started) and waits for Run to return.
func (hs *harness) stop(t *testing.T) {
	t.Helper()
	if hs.runErr == nil {
		return
	}
	hs.gate()
	_ = hs.lc.Drain("test cleanup")
	select {
	case err := <-hs.runErr:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		hs.runErr = nil
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return within 10s")
	}
}

// windowObserver closes ended when the drain records StepWindowEnded.
type windowObserver struct {
	ended chan struct{}
	once  sync.Once
}

func (w *windowObserver) OnTransition(lifecycle.Transition) {}

func (w *windowObserver) OnDrainStep(_ lifecycle.Timeline, s lifecycle.Step) {
	if s.Name == lifecycle.StepWindowEnded {
		w.once.Do(func() { close(w.ended) })
	}
}

func waitState(t *testing.T, lc *lifecycle.Lifecycle, want lifecycle.State) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for lc.State() != want {
		if time.Now().After(deadline) {
			t.Fatalf("state %s, want %s within 5s", lc.State(), want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// do sends a request to the harness and returns status, headers and body.
func (hs *harness) do(t *testing.T, method, path string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, hs.srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v // the client ignores a Host entry in Header
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := hs.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, string(b)
}

func (hs *harness) code(t *testing.T, method, path string) int {
	t.Helper()
	c, _, _ := hs.do(t, method, path, nil)
	return c
}

func mustContain(t *testing.T, body string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(body, s) {
			t.Errorf("body %q does not contain %q", body, s)
		}
	}
}
