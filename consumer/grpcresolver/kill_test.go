package grpcresolver_test

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/consumer/grpcresolver"
	"github.com/drainkit/drainkit/internal/childtest"
)

// grpcService is examples/grpcservice: grpc-go's interop TestService, whose
// UnaryCall sleeps ResponseSize milliseconds.
var grpcService = childtest.NewOnce("github.com/drainkit/drainkit/examples/grpcservice")

// startGRPCService runs one instance as a child process and returns it with
// its gRPC address.
func startGRPCService(t *testing.T) (*childtest.Child, string) {
	t.Helper()
	c := childtest.Start(t, grpcService.Path(t), childtest.Timings(), "--grpc-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0")
	addr, _ := c.LogLines("started")[0]["grpc"].(string)
	if addr == "" {
		t.Fatalf("no grpc address in the started line:\n%s", c.Logs())
	}
	return c, addr
}

// attempts counts a client's call attempts (a stats handler sees each one
// begin), the transparent retries of calls that never left the client
// apart.
type attempts struct {
	begun, transparent atomic.Int64
}

func (a *attempts) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context { return ctx }
func (a *attempts) HandleRPC(_ context.Context, s stats.RPCStats) {
	if b, ok := s.(*stats.Begin); ok && b.Client {
		a.begun.Add(1)
		if b.IsTransparentRetryAttempt {
			a.transparent.Add(1)
		}
	}
}
func (a *attempts) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (a *attempts) HandleConn(context.Context, stats.ConnStats)                       {}

// retries returns the retries of calls calls that the retry policy made
// (attempts after the first, transparent retries left out).
func (a *attempts) retries(calls int64) int64 { return a.begun.Load() - a.transparent.Load() - calls }

// throttled is the most retries grpc-go's retry throttling (20 tokens, one
// off per failed attempt, 0.2 back per success, no retry at 10 or fewer)
// allows for calls that succeeded ok times.
func throttled(ok int64) int64 { return 10 + ok/5 }

// Idempotent unary calls at 200/s through the resolver, each 20ms long, and
// one of three instances killed with kill -9 (its calls in flight cut): no
// call fails, the cut ones being retried by grpc-go's retry policy within
// its throttling.
func TestKill9LosesNoIdempotentCall(t *testing.T) {
	var addrs []string
	var children []*childtest.Child
	for range 3 {
		c, addr := startGRPCService(t)
		children, addrs = append(children, c), append(addrs, addr)
	}
	src, err := consumer.Static("orders", addrs...)
	if err != nil {
		t.Fatal(err)
	}
	var att attempts
	client := dialWith(t, src, []grpc.DialOption{grpc.WithStatsHandler(&att)}, "grpc.testing.TestService/UnaryCall")

	var calls, failed atomic.Int64
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	run := func(d time.Duration) {
		tick := time.NewTicker(5 * time.Millisecond) // 200 calls/s
		defer tick.Stop()
		for end := time.Now().Add(d); time.Now().Before(end); <-tick.C {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_, err := client.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: 20})
				calls.Add(1)
				if err != nil {
					failed.Add(1)
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
	}
	run(time.Second)
	children[1].Signal(syscall.SIGKILL)
	run(2 * time.Second)
	wg.Wait()
	if failed.Load() != 0 || calls.Load() < 400 {
		t.Errorf("%d of %d idempotent calls failed after a kill -9, want 0 of at least 400; first errors: %v", failed.Load(), calls.Load(), errs[:min(len(errs), 3)])
	}
	if r := att.retries(calls.Load()); r > throttled(calls.Load()-failed.Load()) {
		t.Errorf("%d retries for %d calls: more than retry throttling allows (%d)", r, calls.Load(), throttled(calls.Load()-failed.Load()))
	}
	t.Logf("%d calls, %d failed, %d retries (throttling allows %d), %d transparent retries", calls.Load(), failed.Load(),
		att.retries(calls.Load()), throttled(calls.Load()-failed.Load()), att.transparent.Load())
}

// unavailable is a TestService whose calls all fail with UNAVAILABLE, the
// code the retry policy retries.
type unavailable struct {
	testpb.UnimplementedTestServiceServer
	served atomic.Int64
}

func (u *unavailable) EmptyCall(context.Context, *testpb.Empty) (*testpb.Empty, error) {
	u.served.Add(1)
	return nil, status.Error(codes.Unavailable, "always unavailable")
}

// An instance that fails every idempotent call with UNAVAILABLE: the retry
// policy would triple the calls (3 attempts each); retry throttling, the
// retry budget, stops the retries after about 10, as the HTTP transport's
// budget would.
func TestRetriesWithinThrottling(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	u := &unavailable{}
	testpb.RegisterTestServiceServer(gs, u)
	healthgrpc.RegisterHealthServer(gs, health.NewServer()) // the service config checks health
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()
	src, err := consumer.Static("orders", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	var att attempts
	client := dialWith(t, src, []grpc.DialOption{grpc.WithStatsHandler(&att)}, "grpc.testing.TestService/EmptyCall")
	const calls = 100
	for i := range calls {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := client.EmptyCall(ctx, &testpb.Empty{})
		cancel()
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("call %d: %v, want UNAVAILABLE", i, err)
		}
	}
	if r := att.retries(calls); r == 0 || r > throttled(0) {
		t.Errorf("%d retries for %d failing calls (the server saw %d), want 1 to %d: retried, within retry throttling", r, calls, u.served.Load(), throttled(0))
	}
	t.Logf("%d calls, %d retries, server saw %d", calls, att.retries(calls), u.served.Load())
}

// grpc-go accepts the default service config with the retry policy in all
// the forms of method names (it parses it in NewClient and fails on an
// invalid one).
func TestServiceConfigWithRetryPolicyParses(t *testing.T) {
	b := grpcresolver.FromWatcher("", nil)
	for _, methods := range [][]string{nil, {"grpc.testing.TestService/UnaryCall"}, {"/pkg.Svc/Get", "pkg.Other"}} {
		conn, err := grpc.NewClient("drainkit:///orders", append(grpcresolver.DialOptions(b, methods...),
			grpc.WithTransportCredentials(insecure.NewCredentials()))...)
		if err != nil {
			t.Errorf("DialOptions(%q): NewClient: %v", methods, err)
			continue
		}
		conn.Close()
	}
}
