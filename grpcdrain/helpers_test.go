package grpcdrain_test

import (
	"context"
	"github.com/drainkit/drainkit/internal/drainsteps"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/drainkit/drainkit/grpcdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// timings returns small test timings: window min/max as given, quiet 0.
func timings(window, drain time.Duration) budget.Timings {
	return budget.Timings{
		WarmupTimeout:  5 * time.Second,
		PropagationMin: window,
		PropagationMax: window,
		DrainTimeout:   drain,
		StopTimeout:    time.Second,
		GracePeriod:    window + drain + 4*time.Second,
	}
}

// testService is grpc-go's interop TestService: EmptyCall answers at once,
// UnaryCall sleeps req.ResponseSize milliseconds (or until its context
// ends) and panics for a negative size (a handler bug), StreamingOutputCall
// runs the test's stream function.
type testService struct {
	testpb.UnimplementedTestServiceServer
	stream func(*testpb.StreamingOutputCallRequest, grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error
}

func (*testService) EmptyCall(context.Context, *testpb.Empty) (*testpb.Empty, error) {
	return &testpb.Empty{}, nil
}

func (*testService) UnaryCall(ctx context.Context, req *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	if req.ResponseSize < 0 {
		panic("handler bug")
	}
	t := time.NewTimer(time.Duration(req.ResponseSize) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return &testpb.SimpleResponse{}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *testService) StreamingOutputCall(req *testpb.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
	return s.stream(req, ss)
}

// stepRecorder records when each drain step happened.
type stepRecorder = drainsteps.Recorder

// instance is one lifecycle running one grpcdrain server on 127.0.0.1.
type instance struct {
	t      *testing.T
	lc     *lifecycle.Lifecycle
	gd     *grpcdrain.Server
	ln     net.Listener
	addr   string
	steps  *stepRecorder
	runErr chan error
	err    error
	ended  bool
	t0     time.Time
}

// setup creates the lifecycle and the server without running them.
func setup(t *testing.T, tm budget.Timings, svc *testService, opts ...grpcdrain.Option) *instance {
	t.Helper()
	if svc == nil {
		svc = &testService{}
	}
	return setupWith(t, tm, func(lc *lifecycle.Lifecycle, ln net.Listener) *grpcdrain.Server {
		return grpcdrain.New(lc, ln, func(gs *grpc.Server) { testpb.RegisterTestServiceServer(gs, svc) }, opts...)
	})
}

// setupWith is setup with the server that newServer makes on the listener.
func setupWith(t *testing.T, tm budget.Timings, newServer func(*lifecycle.Lifecycle, net.Listener) *grpcdrain.Server) *instance {
	t.Helper()
	rec := drainsteps.New()
	lc, err := lifecycle.New(lifecycle.Options{Timings: tm, Logger: slog.New(slog.DiscardHandler), Observers: []lifecycle.Observer{rec}})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gd := newServer(lc, ln)
	lc.AddServer("grpc", gd)
	return &instance{t: t, lc: lc, gd: gd, ln: ln, addr: ln.Addr().String(), steps: rec, runErr: make(chan error, 1)}
}

// run runs the lifecycle and waits for READY; the test's cleanup drains it
// and waits for Run to return.
func (in *instance) run() *instance {
	in.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	sub, unsubscribe := in.lc.Subscribe()
	defer unsubscribe()
	go func() { in.runErr <- in.lc.Run(ctx) }()
	in.t.Cleanup(func() {
		cancel()
		in.wait(20 * time.Second)
	})
	deadline := time.After(5 * time.Second)
	for in.lc.State() != lifecycle.Ready {
		select {
		case <-sub:
		case <-deadline:
			in.t.Fatalf("not READY after 5s: %s", in.lc.State())
		}
	}
	return in
}

func start(t *testing.T, tm budget.Timings, svc *testService, opts ...grpcdrain.Option) *instance {
	t.Helper()
	return setup(t, tm, svc, opts...).run()
}

// drain starts the drain and waits until the server is in lame duck (the
// lifecycle calls LameDuck just after Drain returns, in Run's goroutine).
func (in *instance) drain() {
	in.t.Helper()
	if err := in.lc.Drain("test"); err != nil {
		in.t.Fatal(err)
	}
	waitFor(in.t, 2*time.Second, "lame duck", func() bool {
		_, ok := in.steps.Time(lifecycle.StepNotReady)
		return ok
	})
	tl, _ := in.lc.Timeline()
	in.t0 = tl.Start
}

// wait waits for Run to return and records its result.
func (in *instance) wait(d time.Duration) error {
	in.t.Helper()
	if in.ended {
		return in.err
	}
	select {
	case in.err = <-in.runErr:
		in.ended = true
	case <-time.After(d):
		in.t.Fatalf("Run did not return within %s", d)
	}
	return in.err
}

func (in *instance) timeline() lifecycle.Timeline {
	in.t.Helper()
	tl, ok := in.lc.Timeline()
	if !ok {
		in.t.Fatal("no timeline: the drain has not started")
	}
	return tl
}

// stepAt returns when the named step happened, failing if it did not.
func (in *instance) stepAt(name string) time.Time {
	in.t.Helper()
	at, ok := in.steps.Time(name)
	if !ok {
		in.t.Fatalf("step %s not recorded", name)
	}
	return at
}

// dial returns a real grpc-go client of addr, closed at the test's end.
func dial(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient("passthrough:///"+addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// awaitNotReady blocks until cc's state leaves READY (e.g. after GOAWAY) and
// returns when it did, or fails after d.
func awaitNotReady(t *testing.T, cc *grpc.ClientConn, d time.Duration) time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for st := cc.GetState(); st == connectivity.Ready; st = cc.GetState() {
		if !cc.WaitForStateChange(ctx, st) {
			t.Fatalf("connection still READY after %s", d)
		}
	}
	return time.Now()
}

// waitFor polls cond every millisecond until it holds or d passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(time.Millisecond)
	}
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
