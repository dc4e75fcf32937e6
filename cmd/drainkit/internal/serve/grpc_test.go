package serve

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// The shutdown strategy's gRPC server: health SERVING, the example's
// methods; GracefulStop waits for a stream that knows of no drain until
// its timeout, then cuts it (UNAVAILABLE), and reports it was late.
func TestPlainGRPCGracefulStopCutsStreams(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var late lateCounter
	gs := plainGRPC(&late)
	served := make(chan error, 1)
	go func() { served <- gs.Serve(ln) }()
	cc := dial(t, ln.Addr().String())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	h, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health: %v, %v; want SERVING", h, err)
	}
	client := testpb.NewTestServiceClient(cc)
	if _, err := client.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: 1}); err != nil {
		t.Fatalf("UnaryCall: %v", err)
	}
	if _, err := client.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: -1}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("UnaryCall with a negative response size: %v, want InvalidArgument", err)
	}
	st, err := client.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	late.start()
	if gracefulStop(gs, 200*time.Millisecond) {
		t.Error("gracefulStop reported the stream ended in time")
	}
	for err == nil {
		_, err = st.Recv()
	}
	if status.Code(err) != codes.Unavailable {
		t.Errorf("the held stream ended with %v, want UNAVAILABLE", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// The drainkit strategy's stream ends cleanly at the drain signal.
func TestStreamEndsCleanlyAtDrainSignal(t *testing.T) {
	drain := make(chan struct{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	registerGRPC(func(context.Context) <-chan struct{} { return drain })(gs)
	served := make(chan error, 1)
	go func() { served <- gs.Serve(ln) }()
	defer func() { gs.Stop(); <-served }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := testpb.NewTestServiceClient(dial(t, ln.Addr().String())).StreamingOutputCall(ctx,
		&testpb.StreamingOutputCallRequest{ResponseParameters: []*testpb.ResponseParameters{{IntervalUs: 10_000}}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // messages every 10 ms while no drain
		if _, err := st.Recv(); err != nil {
			t.Fatal(err)
		}
	}
	close(drain)
	for err == nil {
		_, err = st.Recv()
	}
	if !errors.Is(err, io.EOF) {
		t.Errorf("the stream ended with %v at the drain signal, want a clean end (io.EOF)", err)
	}
}
