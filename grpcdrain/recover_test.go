package grpcdrain_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/drainkit/drainkit/grpcdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// recoverUnary and recoverStream are the recovery interceptors most services
// install: a handler's panic becomes codes.Internal and the process serves on.
func recoverUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = status.Errorf(codes.Internal, "recovered: %v", r)
		}
	}()
	return handler(ctx, req)
}

func recoverStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = status.Errorf(codes.Internal, "recovered: %v", r)
		}
	}()
	return handler(srv, ss)
}

// panicking returns a service whose streaming handler panics (as UnaryCall
// does for a negative size).
func panicking() *testService {
	return &testService{
		stream: func(*testpb.StreamingOutputCallRequest, grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
			panic("stream handler bug")
		},
	}
}

// callPanicking makes one unary and one streaming call to a panicking
// service behind a recovery interceptor, and checks that the recovery
// answered both with codes.Internal.
func callPanicking(t *testing.T, addr string) {
	t.Helper()
	c := testpb.NewTestServiceClient(dial(t, addr))
	_, err := c.UnaryCall(ctxTimeout(t, 5*time.Second), &testpb.SimpleRequest{ResponseSize: -1})
	if status.Code(err) != codes.Internal {
		t.Fatalf("panicking unary call: %v; want codes.Internal from the recovery interceptor", err)
	}
	st, err := c.StreamingOutputCall(ctxTimeout(t, 5*time.Second), &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); status.Code(err) != codes.Internal || err == io.EOF {
		t.Fatalf("panicking stream: %v; want codes.Internal from the recovery interceptor", err)
	}
}

// checkPromptDrain drains in and checks that the drain reached idle at once
// (nothing left counted), cut nothing and that Run returned nil (exit 0).
func checkPromptDrain(t *testing.T, in *instance, drainTimeout time.Duration) {
	t.Helper()
	if f := in.gd.InFlight(); f.Calls != 0 || f.Streams != 0 {
		t.Errorf("in flight after the panicking calls returned: %+v; want none", f)
	}
	in.drain()
	if err := in.wait(drainTimeout + 10*time.Second); err != nil {
		t.Errorf("Run: %v; want nil (exit 0)", err)
	}
	tl := in.timeline()
	closed, ok1 := tl.Offset(lifecycle.StepListenersClosed)
	idle, ok2 := tl.Offset(lifecycle.StepIdle)
	if !ok1 || !ok2 || tl.ForceClosed != 0 {
		t.Fatalf("drain after recovered panics: listeners closed %v (%v), idle %v (%v), %d force-closed; want idle, 0 force-closed",
			closed, ok1, idle, ok2, tl.ForceClosed)
	}
	if d := idle - closed; d > drainTimeout/2 {
		t.Errorf("idle %s after the listeners closed; want at once (drain.timeout %s)", d, drainTimeout)
	}
}

// A handler's panic that the caller's recovery interceptor recovers leaves
// no call or stream counted as in flight, whether the recovery is set with
// grpc.UnaryInterceptor/StreamInterceptor (grpc-go runs it outside
// drainkit's chained interceptors) or chained after them: the next drain
// reaches idle at once, cuts nothing, and Run returns nil.
func TestRecoveredPanicLeavesNothingInFlight(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []grpc.ServerOption
	}{
		{"UnaryInterceptor", []grpc.ServerOption{grpc.UnaryInterceptor(recoverUnary), grpc.StreamInterceptor(recoverStream)}},
		{"ChainUnaryInterceptor", []grpc.ServerOption{grpc.ChainUnaryInterceptor(recoverUnary), grpc.ChainStreamInterceptor(recoverStream)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const drainTimeout = 4 * time.Second
			in := start(t, timings(100*time.Millisecond, drainTimeout), panicking(), grpcdrain.WithServerOptions(tc.opts...))
			callPanicking(t, in.addr)
			checkPromptDrain(t, in, drainTimeout)
		})
	}
}
