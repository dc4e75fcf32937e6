package main

// The acceptance test of issue 20's "adopt an existing gRPC server": the
// example binary runs as real child processes, is called by a real grpc-go
// client over 127.0.0.1 and is sent real signals.

import (
	"context"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/drainkit/drainkit/grpcdrain/loadtest"
	"github.com/drainkit/drainkit/internal/childtest"
)

var binary = childtest.NewOnce("github.com/drainkit/drainkit/examples/grpcservice")

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(binary.RemoveAndExit))
}

// start runs one instance and returns it with its gRPC address.
func start(t *testing.T) (*childtest.Child, string) {
	t.Helper()
	c := childtest.Start(t, binary.Path(t), childtest.Timings(), "--grpc-addr", "127.0.0.1:0")
	lines := c.LogLines("started")
	addr, _ := lines[0]["grpc"].(string)
	if addr == "" {
		t.Fatalf("no grpc address in the started line: %v", lines[0])
	}
	return c, addr
}

// The user-built *grpc.Server (recovery set with grpc.UnaryInterceptor,
// adopted with grpcdrain.Adopt) has a handler panic once, then goes through
// a rolling restart under load: a second process starts and is listed, the
// first gets SIGTERM and is delisted part-way through its propagation window
// (as a registry's deregistration propagates), while 4 callers keep calling
// through a round-robin client. No call fails and the first process exits 0
// (a call left counted by the panic would have it wait drain.timeout, cut 1
// and exit 1).
func TestAdoptedServerRollingRestart(t *testing.T) {
	a, aAddr := start(t)

	cc, err := loadtest.NewClient(aAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	client := testpb.NewTestServiceClient(cc)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	_, err = client.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: -1})
	cancel()
	if status.Code(err) != codes.Internal {
		t.Fatalf("panicking call: %v; want codes.Internal from the recovery interceptor", err)
	}

	load := loadtest.Start(4, 10*time.Second, func(ctx context.Context) error {
		_, err := client.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: 5})
		return err
	})
	defer load.Stop()
	a.WaitFor(10*time.Second, "load on the first instance", func() bool { return load.OK() >= 50 })

	b, bAddr := start(t)
	cc.List(aAddr, bAddr)
	a.Signal(syscall.SIGTERM)
	a.WaitFor(5*time.Second, "DRAINING", func() bool { return a.TransitionsTo("DRAINING") > 0 })
	time.Sleep(childtest.PropagationMin / 3) // pacing: the propagation delay of a registry
	cc.List(bAddr)
	if code := a.WaitExit(childtest.Budget + 5*time.Second); code != 0 {
		t.Errorf("the drained process exited %d; want 0", code)
	}
	atExit := load.OK()
	b.WaitFor(10*time.Second, "load on the new instance", func() bool { return load.OK() >= atExit+50 })
	load.Stop()
	if n := load.Failed(); n != 0 {
		t.Errorf("%d of %d calls failed during the rolling restart; want 0; first errors: %v", n, n+load.OK(), load.Errors())
	}
	t.Logf("%d calls, %d failed", load.OK()+load.Failed(), load.Failed())

	b.Signal(syscall.SIGTERM)
	if code := b.WaitExit(childtest.Budget + 5*time.Second); code != 0 {
		t.Errorf("the new process exited %d; want 0", code)
	}
}
