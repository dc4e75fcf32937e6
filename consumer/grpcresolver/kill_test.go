package grpcresolver_test

import (
	"context"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"

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
	client := dial(t, src, "grpc.testing.TestService/UnaryCall")

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
	t.Logf("%d calls, %d failed", calls.Load(), failed.Load())
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
