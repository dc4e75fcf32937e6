package lifecycletest_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/lifecycletest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func timings(drain time.Duration) lifecycle.Timings {
	return lifecycle.Timings{
		WarmupTimeout:  time.Second,
		PropagationMin: 50 * time.Millisecond,
		PropagationMax: 50 * time.Millisecond,
		DrainTimeout:   drain,
		StopTimeout:    time.Second,
		GracePeriod:    drain + 3*time.Second,
	}
}

// runReady starts Run with srv and waits for READY.
func runReady(t testing.TB, srv lifecycle.Server, drain time.Duration) (*lifecycle.Lifecycle, <-chan error) {
	lc, err := lifecycle.New(lifecycle.WithTimings(timings(drain)), lifecycle.WithSignals(),
		lifecycle.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	lc.AddServer("fake", srv)
	sub := lc.Subscribe()
	defer sub.Close()
	runErr := make(chan error, 1)
	go func() { runErr <- lc.Run(context.Background()) }()
	for lc.State() != lifecycle.Ready {
		<-sub.C
	}
	return lc, runErr
}

// In-flight work ending within drain.timeout: the calls come in the
// documented order, Run returns nil, nothing is cut.
func TestServerDrainsInFlightWork(t *testing.T) {
	srv := lifecycletest.NewServer()
	lc, runErr := runReady(t, srv, 5*time.Second)
	end := srv.Begin(lifecycle.InFlight{Requests: 1})
	<-srv.Serving()
	if err := lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	<-srv.Draining()
	for !slices.Contains(srv.Calls(), lifecycletest.CallAwaitIdle) {
		time.Sleep(time.Millisecond)
	}
	if tl, _ := lc.Timeline(); tl.InFlightAtClose.Requests != 1 {
		t.Errorf("in flight at close %+v; want 1 request", tl.InFlightAtClose)
	}
	end()
	end() // no further effect
	if err := <-runErr; err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := []string{lifecycletest.CallServe, lifecycletest.CallLameDuck, lifecycletest.CallCloseListeners, lifecycletest.CallAwaitIdle}
	if got := srv.Calls(); !slices.Equal(got, want) {
		t.Fatalf("calls %v; want %v", got, want)
	}
	if srv.InFlight().Total() != 0 || srv.ForceClosed() != 0 {
		t.Fatalf("in flight %+v, force-closed %d", srv.InFlight(), srv.ForceClosed())
	}
}

// Work still running at drain.timeout is force-closed and makes Run exit
// with code 1.
func TestServerForceClosed(t *testing.T) {
	srv := lifecycletest.NewServer()
	lc, runErr := runReady(t, srv, 100*time.Millisecond)
	end := srv.Begin(lifecycle.InFlight{Streams: 2})
	defer end()
	if err := lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	err := <-runErr
	if code := lifecycle.ExitCode(err); code != 1 {
		t.Fatalf("Run: %v (exit code %d); want 1", err, code)
	}
	tl, _ := lc.Timeline()
	if tl.ForceClosed != 2 || srv.ForceClosed() != 2 {
		t.Fatalf("timeline force-closed %d, server %d; want 2", tl.ForceClosed, srv.ForceClosed())
	}
	if calls := srv.Calls(); calls[len(calls)-1] != lifecycletest.CallForceClose {
		t.Fatalf("calls %v; want ForceClose last", calls)
	}
}

// A failing Serve starts a drain and makes Run fail.
func TestServerFail(t *testing.T) {
	srv := lifecycletest.NewServer()
	_, runErr := runReady(t, srv, time.Second)
	srv.Fail(fmt.Errorf("listener broke"))
	if code := lifecycle.ExitCode(<-runErr); code != 1 {
		t.Fatalf("exit code %d; want 1", code)
	}
}

// A service's wiring, tested with the fake: the lifecycle calls the server
// in this order, and Run returns once the in-flight request has ended.
func Example() {
	srv := lifecycletest.NewServer()
	lc, _ := lifecycle.New(lifecycle.WithTimings(timings(5*time.Second)), lifecycle.WithSignals(),
		lifecycle.WithLogger(slog.New(slog.DiscardHandler)))
	lc.AddServer("fake", srv)
	lc.OnWarmup("db", func(context.Context) error { return nil })
	sub := lc.Subscribe()
	runErr := make(chan error, 1)
	go func() { runErr <- lc.Run(context.Background()) }()
	for lc.State() != lifecycle.Ready {
		<-sub.C
	}
	sub.Close()

	end := srv.Begin(lifecycle.InFlight{Requests: 1})
	<-srv.Serving()
	_ = lc.Drain("rolling restart")
	<-srv.Draining()
	time.AfterFunc(100*time.Millisecond, end)
	fmt.Println("Run:", <-runErr)
	fmt.Println(srv.Calls())
	// Output:
	// Run: <nil>
	// [Serve LameDuck CloseListeners AwaitIdle]
}
