package httpdrain_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/internal/drainsteps"
	"github.com/drainkit/drainkit/lifecycle"
)

type appKey struct{}

// appHandler answers 200 after ?d=, or 500 naming the cause if its context
// ends first; 500 too if the application's context value is missing.
func appHandler(started chan<- struct{}) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Context().Value(appKey{}) != "app" {
			http.Error(w, "the application's context value is missing", http.StatusInternalServerError)
			return
		}
		d, _ := time.ParseDuration(r.URL.Query().Get("d"))
		started <- struct{}{}
		select {
		case <-time.After(d):
			io.WriteString(w, "ok")
		case <-r.Context().Done():
			http.Error(w, context.Cause(r.Context()).Error(), http.StatusInternalServerError)
		}
	})
}

func get(c *http.Client, url string) error {
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%w %d: %s", errBadStatus, resp.StatusCode, b)
	}
	return nil
}

// Issue 9 item 1: a service whose http.Server.BaseContext or ConnContext is
// cancelled by the same real signal that starts the drain
// (signal.NotifyContext) keeps its in-flight request and serves the
// propagation window's requests: the application's context values reach
// them, its cancellation does not. Nothing is cancelled early or
// force-closed.
func TestAppContextCancelledOnSignal(t *testing.T) {
	for _, hook := range []string{"BaseContext", "ConnContext"} {
		t.Run(hook, func(t *testing.T) { testAppContext(t, hook) })
	}
}

func testAppContext(t *testing.T, hook string) {
	sigCtx, stop := signal.NotifyContext(context.Background(), syscall.SIGUSR1)
	defer stop()
	appCtx := context.WithValue(sigCtx, appKey{}, "app")

	rec := drainsteps.New()
	lc, err := lifecycle.New(lifecycle.Options{Timings: timings(400*time.Millisecond, 5*time.Second), Signals: []os.Signal{syscall.SIGUSR1}, Logger: slog.New(slog.DiscardHandler), Observers: []lifecycle.Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{}, 4)
	srv := &http.Server{Handler: appHandler(started), ReadHeaderTimeout: 5 * time.Second}
	switch hook {
	case "BaseContext":
		srv.BaseContext = func(net.Listener) context.Context { return appCtx }
	case "ConnContext":
		srv.ConnContext = func(context.Context, net.Conn) context.Context { return appCtx }
	}
	lc.AddServer("http", httpdrain.New(srv, ln))
	runErr := make(chan error, 1)
	sub, unsubscribe := lc.Subscribe()
	go func() { runErr <- lc.Run(context.Background()) }()
	for lc.State() != lifecycle.Ready {
		<-sub
	}
	unsubscribe()

	url := "http://" + ln.Addr().String() + "/?d="
	c := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	defer c.CloseIdleConnections()
	inFlight := make(chan error, 1)
	go func() { inFlight <- get(c, url+"700ms") }()
	<-started

	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	<-sigCtx.Done()
	waitFor(t, 2*time.Second, "lame duck", func() bool {
		_, ok := rec.Time(lifecycle.StepNotReady)
		return ok
	})
	// A request in the propagation window, on a new connection.
	if err := get(&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}, url+"50ms"); err != nil {
		t.Errorf("request in the propagation window: %v", err)
	}
	if err := <-inFlight; err != nil {
		t.Errorf("request in flight at t0: %v", err)
	}
	select {
	case err := <-runErr:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	tl, _ := lc.Timeline()
	if tl.ForceClosed != 0 || tl.CancelledEarly != 0 {
		t.Errorf("force-closed %d, cancelled early %d; want 0, 0", tl.ForceClosed, tl.CancelledEarly)
	}
}

// At the drain deadline, the requests still running are cancelled by
// drainkit, with ErrForceClosed as their context's cause, also when the
// application set BaseContext.
func TestForceCloseCause(t *testing.T) {
	causes := make(chan error, 1)
	in := start(t, timings(0, 200*time.Millisecond), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		causes <- context.Cause(r.Context())
	}), func(srv *http.Server) {
		srv.BaseContext = func(net.Listener) context.Context { return context.WithValue(context.Background(), appKey{}, "app") }
	})
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	go func() {
		if resp, err := c.Get(in.url("/")); err == nil {
			resp.Body.Close()
		}
	}()
	waitFor(t, 2*time.Second, "request in flight", func() bool { return in.hs.InFlight().Requests == 1 })
	in.drain()
	if err := in.wait(10 * time.Second); exitCode(err) != 1 {
		t.Fatalf("Run: %v; want exit code 1 (force-closed)", err)
	}
	select {
	case cause := <-causes:
		if !errors.Is(cause, httpdrain.ErrForceClosed) {
			t.Fatalf("cause %v; want ErrForceClosed", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the handler's context was not cancelled")
	}
}
