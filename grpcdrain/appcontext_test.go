package grpcdrain_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/grpcdrain"
	"github.com/drainkit/drainkit/internal/drainsteps"
	"github.com/drainkit/drainkit/lifecycle"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// shutdownStats is an application's stats handler that tears its
// connections' contexts down when the application's context ends (here: a
// real signal, through signal.NotifyContext).
type shutdownStats struct{ app context.Context }

func (h shutdownStats) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	ctx, cancel := context.WithCancelCause(ctx)
	context.AfterFunc(h.app, func() { cancel(context.Cause(h.app)) })
	return ctx
}
func (shutdownStats) HandleConn(context.Context, stats.ConnStats) {}
func (shutdownStats) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context {
	return ctx
}
func (shutdownStats) HandleRPC(context.Context, stats.RPCStats) {}

// Issue 9 item 1 for gRPC: a stats handler whose connection contexts end on
// the signal that starts the drain. Installed with WithStatsHandler, its
// contexts' cancellation is dropped: the call in flight at t0 and the call
// in the propagation window succeed. Installed with WithServerOptions
// (opaque to grpcdrain), the call in flight is cancelled at t0, and the
// timeline counts it as cancelled early although nothing was force-closed.
func TestAppContextCancelledOnSignal(t *testing.T) {
	t.Run("WithStatsHandler", func(t *testing.T) {
		tl, inFlight, window := appContextDrain(t, func(h stats.Handler) grpcdrain.Option { return grpcdrain.WithStatsHandler(h) })
		if inFlight != nil || window != nil {
			t.Errorf("call in flight at t0: %v; call in the window: %v; want both to succeed", inFlight, window)
		}
		if tl.CancelledEarly != 0 || tl.ForceClosed != 0 {
			t.Errorf("cancelled early %d, force-closed %d; want 0, 0", tl.CancelledEarly, tl.ForceClosed)
		}
	})
	t.Run("WithServerOptions", func(t *testing.T) {
		tl, inFlight, _ := appContextDrain(t, func(h stats.Handler) grpcdrain.Option {
			return grpcdrain.WithServerOptions(grpc.StatsHandler(h))
		})
		if status.Code(inFlight) != codes.Canceled {
			t.Errorf("call in flight at t0: %v; want the application's cancellation", inFlight)
		}
		if notifyContextCause && (tl.CancelledEarly < 1 || tl.ForceClosed != 0) {
			t.Errorf("cancelled early %d, force-closed %d; want >= 1, 0", tl.CancelledEarly, tl.ForceClosed)
		}
		if !notifyContextCause && (tl.CancelledEarly != 0 || tl.ForceClosed != 0) {
			t.Errorf("cancelled early %d, force-closed %d; want 0, 0 (no cause to tell the application's cancellation from the client's before Go 1.26)", tl.CancelledEarly, tl.ForceClosed)
		}
	})
}

// appContextDrain serves with the stats handler installed by option, starts
// a 700ms call, sends the real signal that both the application's context
// and the lifecycle follow, makes a 50ms call in the propagation window on a
// new connection, and returns the timeline and both calls' errors.
func appContextDrain(t *testing.T, option func(stats.Handler) grpcdrain.Option) (tl lifecycle.Timeline, inFlight, window error) {
	sigCtx, stop := signal.NotifyContext(context.Background(), syscall.SIGUSR1)
	defer stop()
	rec := drainsteps.New()
	lc, err := lifecycle.New(lifecycle.Options{Timings: timings(400*time.Millisecond, 5*time.Second), Signals: []os.Signal{syscall.SIGUSR1}, Logger: slog.New(slog.DiscardHandler), Observers: []lifecycle.Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	svc := &testService{}
	lc.AddServer("grpc", grpcdrain.New(lc, ln, func(gs *grpc.Server) { testpb.RegisterTestServiceServer(gs, svc) },
		option(shutdownStats{app: sigCtx})))
	runErr := make(chan error, 1)
	sub, unsubscribe := lc.Subscribe()
	go func() { runErr <- lc.Run(context.Background()) }()
	for lc.State() != lifecycle.Ready {
		<-sub
	}
	unsubscribe()

	client := testpb.NewTestServiceClient(dial(t, ln.Addr().String()))
	if _, err := client.EmptyCall(ctxTimeout(t, 5*time.Second), &testpb.Empty{}); err != nil {
		t.Fatal(err)
	}
	calls := make(chan error, 1)
	go func() {
		_, err := client.UnaryCall(ctxTimeout(t, 10*time.Second), &testpb.SimpleRequest{ResponseSize: 700})
		calls <- err
	}()
	waitFor(t, 2*time.Second, "call in flight", func() bool { return lc.Status().InFlight.Calls == 1 })
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	<-sigCtx.Done()
	waitFor(t, 2*time.Second, "lame duck", func() bool {
		_, ok := rec.Time(lifecycle.StepNotReady)
		return ok
	})
	_, window = testpb.NewTestServiceClient(dial(t, ln.Addr().String())).
		UnaryCall(ctxTimeout(t, 5*time.Second), &testpb.SimpleRequest{ResponseSize: 50})
	inFlight = <-calls
	select {
	case err := <-runErr:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	tl, _ = lc.Timeline()
	return tl, inFlight, window
}
