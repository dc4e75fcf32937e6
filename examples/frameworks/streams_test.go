package frameworks_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/consumer/grpcresolver"
	"github.com/drainkit/drainkit/internal/childtest"
	"github.com/drainkit/drainkit/registry"
)

// TestKratosStreams: the kratos example (kratos's gRPC transport adopted by
// grpcdrain, as the README's recipe writes it) serves streams. A plain
// client's bidirectional stream echoes its messages, and a client through
// drainkit's resolver, whose client-side health checking opens a
// grpc.health.v1 Watch stream on every connection, becomes READY and
// streams too. kratos's stream interceptor dereferences the server's
// endpoint, which only kratos.App's Start sets unless the recipe gives
// one: without it the first stream crashed the process (exit 2). The drain
// that follows ends the Watch streams and exits 0.
func TestKratosStreams(t *testing.T) {
	c := childtest.Start(t, bins["kratos"], noWindow, "--grpc-addr", "127.0.0.1:0")
	addr, _ := c.LogLines("started")[0]["grpc"].(string)
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("the start line's grpc address %q: %v", addr, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	plain, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	echo(ctx, t, c, "plain client", testpb.NewTestServiceClient(plain))

	p, _ := strconv.Atoi(port)
	w, err := consumer.NewWatcher(consumer.WatcherOptions{Service: "kratos", Source: consumer.StaticInstances("kratos",
		[]registry.Instance{{ID: "kratos-1", Address: host, Port: p}})})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	resolved, err := grpc.NewClient("drainkit:///kratos", append(grpcresolver.DialOptions(grpcresolver.FromWatcher("", w)),
		grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer resolved.Close()
	resolved.Connect()
	// READY only once the health Watch stream answered SERVING.
	for st := resolved.GetState(); st != connectivity.Ready; st = resolved.GetState() {
		if !resolved.WaitForStateChange(ctx, st) {
			t.Fatalf("the resolver's connection is %s, not READY, after its health check stream (child %s)", st, exited(c))
		}
	}
	if _, err := testpb.NewTestServiceClient(resolved).EmptyCall(ctx, &testpb.Empty{}); err != nil {
		t.Fatalf("EmptyCall through the resolver: %v", err)
	}
	echo(ctx, t, c, "resolver client", testpb.NewTestServiceClient(resolved))

	c.Signal(syscall.SIGTERM)
	if code := c.WaitExit(20 * time.Second); code != 0 {
		t.Fatalf("exit %d after the streams, want 0", code)
	}
}

// echo runs one FullDuplexCall of three messages and checks each echo and
// the stream's clean end.
func echo(ctx context.Context, t *testing.T, c *childtest.Child, who string, client testpb.TestServiceClient) {
	t.Helper()
	fail := func(what string, err error) {
		t.Helper()
		t.Fatalf("%s: %s: %v (child %s)", who, what, err, exited(c))
	}
	st, err := client.FullDuplexCall(ctx)
	if err != nil {
		fail("FullDuplexCall", err)
	}
	for i := range 3 {
		body := []byte("message " + strconv.Itoa(i))
		if err := st.Send(&testpb.StreamingOutputCallRequest{Payload: &testpb.Payload{Body: body}}); err != nil {
			fail("Send", err)
		}
		resp, err := st.Recv()
		if err != nil {
			fail("Recv", err)
		}
		if got := string(resp.GetPayload().GetBody()); got != string(body) {
			t.Fatalf("%s: echo %q, want %q", who, got, body)
		}
	}
	if err := st.CloseSend(); err != nil {
		fail("CloseSend", err)
	}
	if _, err := st.Recv(); !errors.Is(err, io.EOF) {
		fail("the stream's end", err)
	}
}

// exited says whether the child is running or how it exited (a crash is
// exit 2); the test's cleanup prints its logs on failure.
func exited(c *childtest.Child) string {
	select {
	case <-c.Exited():
		return "exited with " + strconv.Itoa(c.ExitCode())
	default:
		return "running"
	}
}
