package grpcdrain_test

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainkit/drainkit/grpcdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// During the propagation window the server keeps serving: a client connected
// before t0 gets GOAWAY at t0 and carries on over a new connection; a client
// that connects during the window is served and gets GOAWAY when its
// connection is between goAwayAfter and twice that old; every call succeeds
// and counts as a late arrival; after the window, connecting is refused.
func TestWindowServesAndMovesClients(t *testing.T) {
	const (
		window      = 1500 * time.Millisecond
		goAwayAfter = 200 * time.Millisecond
	)
	in := start(t, timings(window, 2*time.Second), nil, grpcdrain.WithGoAwayAfter(goAwayAfter))
	old := dial(t, in.addr)
	oldClient := testpb.NewTestServiceClient(old)
	if _, err := oldClient.EmptyCall(ctxTimeout(t, 2*time.Second), &testpb.Empty{}); err != nil {
		t.Fatal(err)
	}

	in.drain()
	goAwayAt := awaitNotReady(t, old, time.Second)
	if d := goAwayAt.Sub(in.t0); d > 300*time.Millisecond {
		t.Errorf("the pre-drain connection got GOAWAY %s after t0; want it at once", d)
	}

	// The old client keeps calling through the window.
	var calls atomic.Int64
	stopCalls := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stopCalls:
				return
			default:
			}
			if _, err := oldClient.EmptyCall(ctxTimeout(t, 2*time.Second), &testpb.Empty{}); err != nil {
				t.Errorf("call during the window: %v", err)
				return
			}
			calls.Add(1)
			time.Sleep(10 * time.Millisecond)
		}
	}()

	// A client that connects during the window.
	fresh := dial(t, in.addr)
	connectAt := time.Now()
	if _, err := testpb.NewTestServiceClient(fresh).EmptyCall(ctxTimeout(t, 2*time.Second), &testpb.Empty{}); err != nil {
		t.Fatalf("call on a connection opened during the window: %v", err)
	}
	servedAt := time.Now()
	freshGoAway := awaitNotReady(t, fresh, 2*time.Second)
	if age := freshGoAway.Sub(connectAt); age < goAwayAfter {
		t.Errorf("window connection got GOAWAY %s after connecting; want >= %s", age, goAwayAfter)
	}
	if age := freshGoAway.Sub(servedAt); age > 2*goAwayAfter+300*time.Millisecond {
		t.Errorf("window connection got GOAWAY %s after its first call; want <= 2*%s (+300ms slack)", age, goAwayAfter)
	}
	if _, ok := in.steps.Time(lifecycle.StepListenersClosed); ok {
		t.Fatal("window too short for this test: the listener closed already")
	}

	time.Sleep(time.Until(in.t0.Add(window - 300*time.Millisecond))) // pacing the load, not synchronisation
	close(stopCalls)
	wg.Wait()

	if err := in.wait(10 * time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if _, err := net.DialTimeout("tcp", in.addr, time.Second); err == nil {
		t.Error("connecting after the drain succeeded; want it refused")
	}
	tl := in.timeline()
	if n := calls.Load(); n < 10 || tl.LateArrivals < n+1 {
		t.Errorf("%d calls during the window (want >= 10), %d late arrivals (want >= %d)", n, tl.LateArrivals, n+1)
	}
	if _, ok := tl.Offset(lifecycle.StepIdle); !ok || tl.ForceClosed != 0 {
		t.Errorf("drain not idle: %+v", tl)
	}
}

// Unary calls in flight when the listener closes complete: one that began
// on a connection from before t0, one on a connection from the window.
// AwaitIdle returns as soon as the last one ends.
func TestInFlightCallsCompleteAcrossClose(t *testing.T) {
	const window = 300 * time.Millisecond
	in := start(t, timings(window, 4*time.Second), nil, grpcdrain.WithGoAwayAfter(0))
	slow := &testpb.SimpleRequest{ResponseSize: 1000} // 1s

	var wg sync.WaitGroup
	var mu sync.Mutex
	var lastEnd time.Time
	call := func(c testpb.TestServiceClient) {
		defer wg.Done()
		if _, err := c.UnaryCall(ctxTimeout(t, 5*time.Second), slow); err != nil {
			t.Errorf("in-flight call across the listener close: %v", err)
		}
		mu.Lock()
		lastEnd = time.Now()
		mu.Unlock()
	}
	before := testpb.NewTestServiceClient(dial(t, in.addr))
	wg.Add(1)
	go call(before)
	waitFor(t, 2*time.Second, "call in flight", func() bool { return in.gd.InFlight().Calls == 1 })

	in.drain()
	during := testpb.NewTestServiceClient(dial(t, in.addr))
	wg.Add(1)
	go call(during)
	waitFor(t, 2*time.Second, "2 calls in flight", func() bool { return in.gd.InFlight().Calls == 2 })
	wg.Wait()

	if err := in.wait(10 * time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
	tl := in.timeline()
	if tl.InFlightAtClose.Calls != 2 {
		t.Errorf("in flight at close = %+v; want 2 calls", tl.InFlightAtClose)
	}
	idleAt := in.stepAt(lifecycle.StepIdle)
	closedAt := in.stepAt(lifecycle.StepListenersClosed)
	if idleAt.Before(lastEnd.Add(-50*time.Millisecond)) || idleAt.Sub(lastEnd) > 250*time.Millisecond {
		t.Errorf("idle %s after the last call ended; want promptly", idleAt.Sub(lastEnd))
	}
	if lastEnd.Before(closedAt) {
		t.Errorf("the calls ended before the listener closed: the test proves nothing")
	}
	if in.gd.InFlight() != (lifecycle.InFlight{}) {
		t.Errorf("InFlight after the drain = %+v", in.gd.InFlight())
	}
}

// A server stream that selects on Draining ends cleanly at t0; the client
// reads its last message and io.EOF.
func TestStreamEndsOnDrainSignal(t *testing.T) {
	hadSignal := make(chan bool, 1)
	svc := &testService{stream: func(_ *testpb.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
		drain := grpcdrain.Draining(ss.Context())
		hadSignal <- drain != nil
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-drain:
				return ss.Send(&testpb.StreamingOutputCallResponse{Payload: &testpb.Payload{Body: []byte("drain")}})
			case <-ss.Context().Done():
				return ss.Context().Err()
			case <-tick.C:
				if err := ss.Send(&testpb.StreamingOutputCallResponse{}); err != nil {
					return err
				}
			}
		}
	}}
	in := start(t, timings(time.Second, 2*time.Second), svc)
	st, err := testpb.NewTestServiceClient(dial(t, in.addr)).StreamingOutputCall(ctxTimeout(t, 10*time.Second), &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	if !<-hadSignal {
		t.Fatal("Draining(ctx) is nil inside a grpcdrain stream")
	}
	if got := in.gd.InFlight(); got.Streams != 1 {
		t.Fatalf("InFlight = %+v; want 1 stream", got)
	}

	in.drain()
	var last []byte
	for {
		r, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("stream ended with %v; want a clean end", err)
		}
		last = r.GetPayload().GetBody()
	}
	if string(last) != "drain" {
		t.Errorf("last message %q; want the drain message", last)
	}
	if d := time.Since(in.t0); d > 500*time.Millisecond {
		t.Errorf("stream ended %s after t0; want at once", d)
	}
	if _, ok := in.steps.Time(lifecycle.StepListenersClosed); ok {
		t.Error("the stream ended after the listener closed")
	}
	if err := in.wait(10 * time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if tl := in.timeline(); tl.InFlightAtClose.Streams != 0 || tl.ForceClosed != 0 {
		t.Errorf("timeline %+v", tl)
	}
}

// A stream that ignores the drain signal is cut at drain.timeout and counted
// as force-closed; its client sees UNAVAILABLE, its handler's context is
// cancelled, and Run exits with code 1.
func TestIgnoringStreamIsForceClosed(t *testing.T) {
	const (
		window = 200 * time.Millisecond
		drain  = 500 * time.Millisecond
	)
	cancelled := make(chan struct{})
	svc := &testService{stream: func(_ *testpb.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
		if err := ss.Send(&testpb.StreamingOutputCallResponse{}); err != nil {
			return err
		}
		<-ss.Context().Done()
		close(cancelled)
		return ss.Context().Err()
	}}
	in := start(t, timings(window, drain), svc)
	st, err := testpb.NewTestServiceClient(dial(t, in.addr)).StreamingOutputCall(ctxTimeout(t, 10*time.Second), &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	in.drain()
	_, err = st.Recv()
	cutAt := time.Now()
	if status.Code(err) != codes.Unavailable {
		t.Errorf("cut stream ended with %v; want UNAVAILABLE", err)
	}
	select {
	case <-cancelled:
	case <-time.After(2 * time.Second):
		t.Fatal("the handler's context was not cancelled")
	}
	err = in.wait(10 * time.Second)
	if code := lifecycle.ExitCode(err); code != 1 {
		t.Fatalf("exit code %d (%v); want 1", code, err)
	}
	tl := in.timeline()
	if tl.ForceClosed != 1 || tl.InFlightAtClose.Streams != 1 {
		t.Errorf("force-closed %d, in flight at close %+v; want 1 stream", tl.ForceClosed, tl.InFlightAtClose)
	}
	closedAt := in.stepAt(lifecycle.StepListenersClosed)
	if d := cutAt.Sub(closedAt); d < drain-50*time.Millisecond || d > drain+500*time.Millisecond {
		t.Errorf("stream cut %s after the listener closed; want about drain.timeout (%s)", d, drain)
	}
}

// The caller's interceptors, set with grpc.UnaryInterceptor and chained,
// keep working around the handler, and the call is in flight inside them.
func TestCallerInterceptorsKeepWorking(t *testing.T) {
	var order []string
	var mu sync.Mutex
	record := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	var gd *grpcdrain.Server
	inner := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		record("chained")
		if n := gd.InFlight().Calls; n != 1 {
			t.Errorf("inside the caller's interceptor InFlight().Calls = %d; want 1", n)
		}
		return h(ctx, req)
	}
	single := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		record("single")
		return h(ctx, req)
	}
	stream := func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		record("stream")
		return h(srv, ss)
	}
	svc := &testService{stream: func(*testpb.StreamingOutputCallRequest, grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
		return nil
	}}
	in := setup(t, timings(100*time.Millisecond, time.Second), svc, grpcdrain.WithServerOptions(
		grpc.UnaryInterceptor(single), grpc.ChainUnaryInterceptor(inner), grpc.StreamInterceptor(stream)))
	gd = in.gd
	in.run()
	c := testpb.NewTestServiceClient(dial(t, in.addr))
	if _, err := c.EmptyCall(ctxTimeout(t, 2*time.Second), &testpb.Empty{}); err != nil {
		t.Fatal(err)
	}
	st, err := c.StreamingOutputCall(ctxTimeout(t, 2*time.Second), &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != io.EOF {
		t.Fatalf("stream: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(order) != 3 || order[0] != "single" || order[1] != "chained" || order[2] != "stream" {
		t.Errorf("interceptors ran %v; want [single chained stream]", order)
	}
}

// If the listener fails, Serve returns an error naming it, the lifecycle
// drains, and the connection already open is still served and drained.
func TestServeFailureDrains(t *testing.T) {
	in := start(t, timings(100*time.Millisecond, 2*time.Second), nil)
	c := testpb.NewTestServiceClient(dial(t, in.addr))
	if _, err := c.EmptyCall(ctxTimeout(t, 2*time.Second), &testpb.Empty{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.UnaryCall(ctxTimeout(t, 5*time.Second), &testpb.SimpleRequest{ResponseSize: 500})
		done <- err
	}()
	waitFor(t, 2*time.Second, "call in flight", func() bool { return in.gd.InFlight().Calls == 1 })
	in.ln.Close() // someone else closed our listener

	err := in.wait(10 * time.Second)
	if err == nil || lifecycle.ExitCode(err) != 1 {
		t.Fatalf("Run = %v; want exit code 1", err)
	}
	if err := <-done; err != nil {
		t.Errorf("in-flight call after the listener failed: %v", err)
	}
	if tl := in.timeline(); tl.ForceClosed != 0 {
		t.Errorf("force-closed %d", tl.ForceClosed)
	}
}

// Draining is nil outside a grpcdrain call.
func TestDrainingOutsideACall(t *testing.T) {
	if grpcdrain.Draining(context.Background()) != nil {
		t.Error("Draining(context.Background()) is not nil")
	}
}
