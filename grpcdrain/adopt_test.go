package grpcdrain_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainkit/drainkit/grpcdrain"
	"github.com/drainkit/drainkit/grpcdrain/loadtest"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// adopted starts an instance whose grpc.Server the test builds itself, the
// way a user does: drainkit's options, the user's recovery interceptor
// placed as place says, the user's service.
func adopted(t *testing.T, tm budget.Timings, place string, svc *testService, opts ...grpcdrain.Option) *instance {
	t.Helper()
	var builds atomic.Int32
	in := setupWith(t, tm, func(lc *lifecycle.Lifecycle, ln net.Listener) *grpcdrain.Server {
		return grpcdrain.Adopt(lc, ln, func(drainOpts ...grpc.ServerOption) *grpc.Server {
			builds.Add(1)
			var all []grpc.ServerOption
			switch place {
			case "UnaryInterceptor":
				all = append(drainOpts, grpc.UnaryInterceptor(recoverUnary), grpc.StreamInterceptor(recoverStream))
			case "chained before drainkit's":
				all = append([]grpc.ServerOption{grpc.ChainUnaryInterceptor(recoverUnary), grpc.ChainStreamInterceptor(recoverStream)}, drainOpts...)
			default:
				t.Fatalf("unknown placement %q", place)
			}
			gs := grpc.NewServer(all...)
			testpb.RegisterTestServiceServer(gs, svc)
			return gs
		}, opts...)
	}).run()
	waitFor(t, 2*time.Second, "the first build", func() bool { return builds.Load() > 0 })
	return in
}

// A server the user builds, with a recovery interceptor set outside
// drainkit's (grpc.UnaryInterceptor) or chained before drainkit's options,
// and a handler that panicked once, goes through a rolling restart under
// load: a client (round robin over a resolver the test updates, as a
// registry would) keeps calling while a second instance starts and the first
// one drains. No call fails, the first drain reaches idle with nothing cut
// and Run returns nil (exit 0). With WithSingleServer (a server built once)
// the same holds.
func TestAdoptedServerRollingRestart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		place string
		opts  []grpcdrain.Option
	}{
		{"UnaryInterceptor", "UnaryInterceptor", nil},
		{"ChainedFirst", "chained before drainkit's", nil},
		{"SingleServer", "UnaryInterceptor", []grpcdrain.Option{grpcdrain.WithSingleServer()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const (
				window       = 800 * time.Millisecond
				drainTimeout = 4 * time.Second
			)
			tm := timings(window, drainTimeout)
			a := adopted(t, tm, tc.place, &testService{}, tc.opts...)

			cc, err := loadtest.NewClient(a.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer cc.Close()
			client := testpb.NewTestServiceClient(cc)

			// The handler panics once; the user's recovery answers.
			_, err = client.UnaryCall(ctxTimeout(t, 5*time.Second), &testpb.SimpleRequest{ResponseSize: -1})
			if status.Code(err) != codes.Internal {
				t.Fatalf("panicking call: %v; want codes.Internal from the recovery interceptor", err)
			}

			// Load: 4 callers, each call 5ms on the server.
			load := loadtest.Start(4, 5*time.Second, func(ctx context.Context) error {
				_, err := client.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: 5})
				return err
			})
			defer load.Stop()
			waitFor(t, 5*time.Second, "load on the first instance", func() bool { return load.OK() >= 20 })

			// The rolling restart: the new instance starts and is listed,
			// the old one drains and is delisted part-way through its
			// window, as a registry's deregistration propagates.
			b := adopted(t, tm, tc.place, &testService{}, tc.opts...)
			cc.List(a.addr, b.addr)
			a.drain()
			time.Sleep(window / 3) // pacing: the propagation delay of a registry
			cc.List(b.addr)
			if err := a.wait(drainTimeout + 10*time.Second); err != nil {
				t.Errorf("the old instance's Run: %v; want nil (exit 0)", err)
			}
			atEnd := load.OK()
			waitFor(t, 5*time.Second, "load on the new instance", func() bool { return load.OK() >= atEnd+20 })
			load.Stop()

			tl := a.timeline()
			if _, idle := tl.Offset(lifecycle.StepIdle); !idle || tl.ForceClosed != 0 {
				t.Errorf("old instance's drain: idle %v, %d force-closed; want idle, 0", idle, tl.ForceClosed)
			}
			if n := load.Failed(); n != 0 {
				t.Errorf("%d of %d calls failed during the rolling restart; want 0; first errors: %v", n, n+load.OK(), load.Errors())
			}
			t.Logf("%d calls, %d failed; old instance: %d late arrivals, %+v in flight at close", load.OK()+load.Failed(), load.Failed(), tl.LateArrivals, tl.InFlightAtClose)
		})
	}
}

// With WithSingleServer, build is called once and its server serves until
// the listener closes: a connection opened before t0 is served through the
// window and gets GOAWAY when the listener closes (not at t0), and health
// goes NOT_SERVING at t0 all the same.
func TestSingleServerMovesClientsAtClose(t *testing.T) {
	const window = 600 * time.Millisecond
	var builds atomic.Int32
	in := setupWith(t, timings(window, 2*time.Second), func(lc *lifecycle.Lifecycle, ln net.Listener) *grpcdrain.Server {
		return grpcdrain.Adopt(lc, ln, func(opts ...grpc.ServerOption) *grpc.Server {
			builds.Add(1)
			gs := grpc.NewServer(opts...)
			testpb.RegisterTestServiceServer(gs, &testService{})
			return gs
		}, grpcdrain.WithSingleServer())
	}).run()
	cc := dial(t, in.addr)
	if _, err := testpb.NewTestServiceClient(cc).EmptyCall(ctxTimeout(t, 2*time.Second), &testpb.Empty{}); err != nil {
		t.Fatal(err)
	}
	in.drain()
	resp, err := in.gd.Health().Check(ctxTimeout(t, time.Second), &healthpb.HealthCheckRequest{})
	if err != nil || resp.Status != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("health after t0: %v, %v; want NOT_SERVING", resp, err)
	}
	moved := awaitNotReady(t, cc, window+2*time.Second).Sub(in.t0)
	if err := in.wait(10 * time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
	// The window's end is recorded just before the listener closes.
	if ended, ok := in.timeline().Offset(lifecycle.StepWindowEnded); !ok || moved < ended {
		t.Errorf("the connection got GOAWAY %s after t0, before the window ended (%s, %v); want it when the listener closes",
			moved, ended, ok)
	}
	if n := builds.Load(); n != 1 {
		t.Errorf("build called %d times; want 1", n)
	}
}
