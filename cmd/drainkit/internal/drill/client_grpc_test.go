package drill

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// slowService answers UnaryCall after ResponseSize milliseconds and ends
// every stream cleanly after its first message until ends is drained, then
// holds it until the client cancels.
type slowService struct {
	testpb.UnimplementedTestServiceServer
	ends chan struct{} // one receive per clean early end
}

func (slowService) UnaryCall(ctx context.Context, req *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	select {
	case <-time.After(time.Duration(req.GetResponseSize()) * time.Millisecond):
		return &testpb.SimpleResponse{}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s slowService) StreamingOutputCall(_ *testpb.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
	if err := ss.Send(&testpb.StreamingOutputCallResponse{}); err != nil {
		return err
	}
	select {
	case <-s.ends:
		return nil // as at the drain signal
	default:
	}
	<-ss.Context().Done()
	return ss.Context().Err()
}

// serveTest serves slowService on a loopback port until the test ends.
func serveTest(t *testing.T, svc slowService) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	testpb.RegisterTestServiceServer(gs, svc)
	done := make(chan struct{})
	go func() { defer close(done); _ = gs.Serve(ln) }()
	t.Cleanup(func() { gs.Stop(); <-done })
	return ln.Addr().String()
}

// dialTest is a ClientConn to addr through the drill's dial options.
func dialTest(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	cc, err := grpc.NewClient("passthrough:///"+addr, grpcDialOptions(drillDialer)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// The gRPC load's outcomes are classified as the same failures over HTTP:
// a refused dial, a deadline, success; a call's trace names the instance.
func TestGRPCCallOutcomes(t *testing.T) {
	addr := serveTest(t, slowService{})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	att := grpcCall{}.do(ctx, dialTest(t, addr))
	if att.Err != nil || att.Addr != addr || att.FirstAddr != addr || att.Unanswered != "" || Classify(att.Status, att.Err) != OK {
		t.Errorf("a call that succeeded: %+v", att)
	}

	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := free.Addr().String()
	_ = free.Close()
	att = grpcCall{}.do(ctx, dialTest(t, closed))
	if got := Classify(att.Status, att.Err); got != Refused {
		t.Errorf("a call to a closed port: %v classified %v, want %v", att.Err, got, Refused)
	}

	// GRPCUnaryWork (20 ms) of work within a 5 ms deadline.
	short, cancelShort := context.WithTimeout(ctx, 5*time.Millisecond)
	defer cancelShort()
	att = grpcCall{}.do(short, dialTest(t, addr))
	if got := Classify(att.Status, att.Err); got != Timeout {
		t.Errorf("a call past its deadline: %v classified %v, want %v", att.Err, got, Timeout)
	}
}

// A stream the server ends cleanly before the hold is re-opened and counts
// as a retry, not a failure; held to the end, it succeeds.
func TestGRPCStreamReopensAfterCleanEnd(t *testing.T) {
	svc := slowService{ends: make(chan struct{}, 2)}
	svc.ends <- struct{}{}
	svc.ends <- struct{}{}
	addr := serveTest(t, svc)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	att := grpcCall{stream: true, hold: 300 * time.Millisecond}.do(ctx, dialTest(t, addr))
	if att.Err != nil || att.Retries != 2 {
		t.Errorf("stream ended cleanly twice, then held: err %v, retries %d; want nil, 2", att.Err, att.Retries)
	}
}

// validateProtocol names the flag and what the gRPC protocols exclude.
func TestValidateProtocol(t *testing.T) {
	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Protocol = "thrift" }, "--protocol"},
		{func(c *Config) { c.Protocol, c.Exec = ProtocolGRPC, "/bin/true" }, "--exec"},
		{func(c *Config) { c.Protocol, c.Method = ProtocolGRPC, "POST" }, "--method"},
		{func(c *Config) { c.Protocol, c.Nacos = ProtocolGRPC, "127.0.0.1:8848" }, "Nacos"},
		{func(c *Config) { c.Protocol, c.StreamHold = ProtocolGRPCStream, 2*time.Second }, "--stream-hold"},
		{func(c *Config) { c.Protocol, c.ConsumerKind = ProtocolGRPC, "custom" }, "--consumer"},
	} {
		c := DefaultConfig()
		tc.change(&c)
		if err := c.validateProtocol(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want one naming %s", c.Protocol, err, tc.want)
		}
	}
	for _, p := range Protocols {
		c := DefaultConfig()
		c.Protocol = p
		if err := c.validateProtocol(); err != nil {
			t.Errorf("--protocol %s with the defaults: %v", p, err)
		}
	}
}
