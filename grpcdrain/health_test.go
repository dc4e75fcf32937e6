package grpcdrain_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/drainkit/drainkit/grpcdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

const (
	serving    = healthpb.HealthCheckResponse_SERVING
	notServing = healthpb.HealthCheckResponse_NOT_SERVING
)

// checkAll asks the server's health for "" and "svc" over gRPC and fails
// unless both are want.
func checkAll(t *testing.T, hc healthpb.HealthClient, want healthpb.HealthCheckResponse_ServingStatus) {
	t.Helper()
	for _, svc := range []string{"", "svc"} {
		r, err := hc.Check(ctxTimeout(t, 2*time.Second), &healthpb.HealthCheckRequest{Service: svc})
		if err != nil {
			t.Fatalf("Check(%q): %v", svc, err)
		}
		if r.Status != want {
			t.Fatalf("Check(%q) = %s, want %s", svc, r.Status, want)
		}
	}
}

// awaitHealth polls Check("") until it reports want.
func awaitHealth(t *testing.T, hc healthpb.HealthClient, want healthpb.HealthCheckResponse_ServingStatus) {
	t.Helper()
	waitFor(t, 2*time.Second, "health "+want.String(), func() bool {
		r, err := hc.Check(ctxTimeout(t, time.Second), &healthpb.HealthCheckRequest{})
		return err == nil && r.Status == want
	})
	checkAll(t, hc, want)
}

// Health follows the lifecycle: NOT_SERVING in STARTING, SERVING in READY,
// NOT_SERVING when EJECTED, SERVING again on restore.
func TestHealthFollowsLifecycle(t *testing.T) {
	in := setup(t, timings(200*time.Millisecond, time.Second), nil, grpcdrain.WithHealthServices("svc"))
	warm := make(chan struct{})
	in.lc.OnWarmup("gate", func(ctx context.Context) error {
		select {
		case <-warm:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	go func() {
		// STARTING: Serve has not run; the health server (not yet served)
		// already answers NOT_SERVING.
		defer close(warm)
		for _, svc := range []string{"", "svc"} {
			r, err := in.gd.Health().Check(context.Background(), &healthpb.HealthCheckRequest{Service: svc})
			if err != nil || r.Status != notServing {
				t.Errorf("STARTING: Check(%q) = %v, %v; want NOT_SERVING", svc, r, err)
			}
		}
	}()
	in.run()
	hc := healthpb.NewHealthClient(dial(t, in.addr))
	checkAll(t, hc, serving)

	if err := in.lc.Eject("test"); err != nil {
		t.Fatal(err)
	}
	awaitHealth(t, hc, notServing)
	if err := in.lc.Restore("test"); err != nil {
		t.Fatal(err)
	}
	awaitHealth(t, hc, serving)

	in.drain()
	checkAll(t, hc, notServing)
	if err := in.wait(10 * time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if tl := in.timeline(); tl.LateArrivals != 0 {
		t.Errorf("health checks counted as %d late arrivals; they are not traffic", tl.LateArrivals)
	}
}

// A health Watch sees SERVING, then NOT_SERVING at t0, before the listener
// closes; setting SERVING after t0 has no effect; the Watch ends with
// UNAVAILABLE when the listener closes and does not hold the drain open.
func TestHealthWatchThroughDrain(t *testing.T) {
	const window = 600 * time.Millisecond
	in := start(t, timings(window, 3*time.Second), nil, grpcdrain.WithHealthServices("svc"))
	hc := healthpb.NewHealthClient(dial(t, in.addr))
	w, err := hc.Watch(ctxTimeout(t, 10*time.Second), &healthpb.HealthCheckRequest{Service: "svc"})
	if err != nil {
		t.Fatal(err)
	}
	// Health follows the lifecycle from a subscription (latest wins), so on
	// a busy machine the Watch can start before READY has reached it: its
	// first update is then NOT_SERVING, and SERVING follows.
	r, err := w.Recv()
	if err == nil && r.Status == notServing {
		r, err = w.Recv()
	}
	if err != nil || r.Status != serving {
		t.Fatalf("Watch update in READY = %v, %v; want SERVING", r, err)
	}

	in.drain()
	r, err = w.Recv()
	notServingAt := time.Now()
	if err != nil || r.Status != notServing {
		t.Fatalf("Watch update after t0 = %v, %v; want NOT_SERVING", r, err)
	}
	if _, closed := in.steps.Time(lifecycle.StepListenersClosed); closed {
		t.Fatal("the listener closed before the Watch saw NOT_SERVING")
	}
	if d := notServingAt.Sub(in.t0); d > 300*time.Millisecond {
		t.Errorf("Watch saw NOT_SERVING %s after t0; want it at once", d)
	}

	// Nobody can bring it back during the drain.
	in.gd.Health().SetServingStatus("", serving)
	in.gd.Health().SetServingStatus("svc", serving)
	checkAll(t, hc, notServing)

	// The Watch ends when the listener closes, with UNAVAILABLE. The
	// lifecycle records listeners_closed after CloseListeners returns, and
	// CloseListeners ends the Watch after closing the listener, so the client
	// can see the end before the step is recorded: the listener itself is the
	// witness (a dial is refused once the Watch has ended), and the step's
	// time is compared both ways.
	_, err = w.Recv()
	endedAt := time.Now()
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("Watch ended with %v; want UNAVAILABLE", err)
	}
	if nc, err := net.DialTimeout("tcp", in.addr, time.Second); err == nil {
		nc.Close()
		t.Errorf("Watch ended while the listener still accepted")
	}
	waitFor(t, 5*time.Second, "step listeners_closed", func() bool {
		_, ok := in.steps.Time(lifecycle.StepListenersClosed)
		return ok
	})
	closedAt := in.stepAt(lifecycle.StepListenersClosed)
	if d := endedAt.Sub(closedAt); d > 500*time.Millisecond || d < -500*time.Millisecond {
		t.Errorf("Watch ended %s from the listener closing (listeners_closed step); want at once", d)
	}

	if err := in.wait(10 * time.Second); err != nil {
		t.Fatalf("Run: %v (a Watch must not be force-closed)", err)
	}
	tl := in.timeline()
	if tl.ForceClosed != 0 || tl.InFlightAtClose.Streams != 0 {
		t.Errorf("Watch counted as in flight: force-closed %d, streams at close %d", tl.ForceClosed, tl.InFlightAtClose.Streams)
	}
	if _, ok := tl.Offset(lifecycle.StepIdle); !ok {
		t.Errorf("no idle step in %+v", tl.Steps)
	}
	if off, _ := tl.Offset(lifecycle.StepIdle); off > window+time.Second {
		t.Errorf("idle at %s: the Watch held the drain", off)
	}
}

// A health server passed in is the one driven and served.
func TestHealthServerPassedIn(t *testing.T) {
	hs := health.NewServer()
	in := start(t, timings(100*time.Millisecond, time.Second), nil, grpcdrain.WithHealthServer(hs))
	if in.gd.Health() != hs {
		t.Fatal("Health() is not the server passed in")
	}
	hs.SetServingStatus("other", serving) // the caller's own service
	hc := healthpb.NewHealthClient(dial(t, in.addr))
	r, err := hc.Check(ctxTimeout(t, 2*time.Second), &healthpb.HealthCheckRequest{Service: "other"})
	if err != nil || r.Status != serving {
		t.Fatalf("Check(other) = %v, %v", r, err)
	}
	in.drain()
	r, err = hc.Check(ctxTimeout(t, 2*time.Second), &healthpb.HealthCheckRequest{Service: "other"})
	if err != nil || r.Status != notServing {
		t.Fatalf("after t0 Check(other) = %v, %v; want NOT_SERVING", r, err)
	}
	if err := in.wait(10 * time.Second); err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
}
