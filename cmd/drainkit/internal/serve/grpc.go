package serve

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/drainkit/drainkit/internal/syncx"
)

// The example's gRPC service (Options.GRPCAddr) is grpc-go's interop
// TestService, as examples/grpcservice serves it, with the health service:
//
//   - EmptyCall answers at once;
//   - UnaryCall answers after ResponseSize milliseconds (at most
//     maxUnaryWork), or when the call's context ends;
//   - StreamingOutputCall is a subscription: it sends one message every
//     ResponseParameters[0].IntervalUs microseconds (default
//     defaultStreamInterval) until the client cancels it. Under the drainkit
//     strategy it also ends, cleanly (status OK), at the drain signal
//     (grpcdrain.Draining), so the client re-opens it elsewhere; the other
//     strategies' handler knows of no drain, as most services' do.
const (
	maxUnaryWork          = 10 * time.Second
	defaultStreamInterval = 50 * time.Millisecond
)

// testService implements testpb.TestServiceServer for every strategy.
type testService struct {
	testpb.UnimplementedTestServiceServer
	// drain returns the drain signal of a call (grpcdrain.Draining), nil
	// for a strategy without one: a receive from nil never fires.
	drain func(ctx context.Context) <-chan struct{}
}

// EmptyCall answers at once.
func (testService) EmptyCall(context.Context, *testpb.Empty) (*testpb.Empty, error) {
	return &testpb.Empty{}, nil
}

// UnaryCall answers after ResponseSize milliseconds (0 to maxUnaryWork).
func (testService) UnaryCall(ctx context.Context, req *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	d := time.Duration(req.GetResponseSize()) * time.Millisecond
	if d < 0 || d > maxUnaryWork {
		return nil, status.Errorf(codes.InvalidArgument, "response_size: %d ms is out of range: 0..%d", req.GetResponseSize(), maxUnaryWork.Milliseconds())
	}
	if err := syncx.Sleep(ctx, d); err != nil {
		return nil, status.FromContextError(err).Err()
	}
	return &testpb.SimpleResponse{}, nil
}

// StreamingOutputCall sends a message every interval until the client
// cancels, or, with a drain signal, until the drain starts.
func (s testService) StreamingOutputCall(req *testpb.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
	interval := defaultStreamInterval
	if p := req.GetResponseParameters(); len(p) > 0 && p[0].GetIntervalUs() > 0 {
		interval = time.Duration(p[0].GetIntervalUs()) * time.Microsecond
	}
	ctx := ss.Context()
	var drain <-chan struct{}
	if s.drain != nil {
		drain = s.drain(ctx)
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if err := ss.Send(&testpb.StreamingOutputCallResponse{}); err != nil {
			return err
		}
		select {
		case <-drain:
			return nil // a clean end: the client re-opens on another instance
		case <-ctx.Done():
			return status.FromContextError(ctx.Err()).Err()
		case <-tick.C:
		}
	}
}

// registerGRPC registers the example's gRPC services on gs, with drain as
// testService.drain.
func registerGRPC(drain func(context.Context) <-chan struct{}) func(*grpc.Server) {
	return func(gs *grpc.Server) { testpb.RegisterTestServiceServer(gs, testService{drain: drain}) }
}

// listenGRPC opens the gRPC listener when Options.GRPCAddr is set (nil
// otherwise).
func listenGRPC(o Options) (net.Listener, error) {
	if o.GRPCAddr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", o.GRPCAddr)
	if err != nil {
		return nil, fmt.Errorf("--grpc-addr: %w", err)
	}
	return ln, nil
}

// plainGRPC is the gRPC server of a strategy without drainkit: the
// example's services and the health service, SERVING for as long as the
// process serves (as most services set it once at start); interceptors
// count the calls that arrive after the shutdown began (late).
func plainGRPC(late *lateCounter) *grpc.Server {
	gs := grpc.NewServer(
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			late.note()
			return h(ctx, req)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			late.note()
			return h(srv, ss)
		}),
	)
	registerGRPC(nil)(gs)
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(gs, hs)
	return gs
}

// gracefulStop is what a service without drainkit does on SIGTERM:
// grpc.Server.GracefulStop (listener closed, GOAWAY, wait for the calls and
// streams in flight), bounded by timeout, after which Stop cuts what still
// runs. It reports whether everything ended in time.
func gracefulStop(gs *grpc.Server, timeout time.Duration) bool {
	var wg sync.WaitGroup
	wg.Go(gs.GracefulStop)
	if syncx.WaitFor(&wg, timeout) {
		return true
	}
	gs.Stop() // GracefulStop returns too, once Stop closed everything
	wg.Wait()
	return false
}
