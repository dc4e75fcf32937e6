package grpcdrain_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/paced"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// Issue 32, over gRPC: gRPC callers are told apart by their IP, so the slow
// consumer dials from 127.0.0.2 and the fast one from 127.0.0.1 (real
// grpc-go clients). A slow one (every 400 ms) and a fast one (every 5 ms)
// call for 2 s, then through the drain, the fast one for 1 s more, the slow
// one for 3 s. With quiet 100 ms (min 0) the instance-wide rule alone ends
// the window 100 ms after the fast caller stops, and the slow caller's next
// calls fail (Unavailable: the listener is closed). The window must wait for
// the slow caller by its own gap: none of its calls fails, the window ends
// at least two of its gaps after its last call, and before
// propagation.max.
func TestWindowWaitsForSlowGRPCCaller(t *testing.T) {
	tm := budget.Timings{WarmupTimeout: 5 * time.Second, PropagationQuiet: 100 * time.Millisecond,
		PropagationMax: 15 * time.Second, DrainTimeout: 2 * time.Second, StopTimeout: time.Second, GracePeriod: 25 * time.Second}
	in := start(t, tm, nil)
	client := func(from string) func() error {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		cc, err := grpc.NewClient("passthrough:///"+in.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
			grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		tc := testpb.NewTestServiceClient(cc)
		return func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := tc.EmptyCall(ctx, &testpb.Empty{})
			return err
		}
	}
	slow, fast := paced.SlowAndFast(client("127.0.0.2"), client("127.0.0.1"), in.drain)
	if err := in.wait(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	paced.CheckWindow(t, slow, fast, in.t0, in.stepAt(lifecycle.StepWindowEnded), tm.PropagationMax)
}
