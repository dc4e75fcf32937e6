package grpcresolver_test

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/consumer/grpcresolver"
	"github.com/drainkit/drainkit/registry"
)

// TestResolverDialsGRPCEndpoint: an instance registered once with an HTTP
// and a gRPC endpoint, whose Address and Port the source took from the
// HTTP one (nothing listens there), is dialled at its "grpc" endpoint, with
// the Watcher shared as an HTTP Transport would share it.
func TestResolverDialsGRPCEndpoint(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	svc := &service{}
	testpb.RegisterTestServiceServer(gs, svc)
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	httpPort := dead.Addr().(*net.TCPAddr).Port
	dead.Close()

	in := registry.Instance{ID: "orders-1", Address: "127.0.0.1", Port: httpPort, Endpoints: []registry.Endpoint{
		{Scheme: "http", Address: "127.0.0.1", Port: httpPort}, {Scheme: "grpc", Address: "127.0.0.1", Port: ln.Addr().(*net.TCPAddr).Port}}}
	w, err := consumer.NewWatcher(consumer.WatcherOptions{Service: "orders", Source: consumer.StaticInstances("orders", []registry.Instance{in})})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	conn, err := grpc.NewClient("drainkit:///orders", append(grpcresolver.DialOptions(grpcresolver.FromWatcher("", w)),
		grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := testpb.NewTestServiceClient(conn).EmptyCall(ctx, &testpb.Empty{}, grpc.WaitForReady(true)); err != nil {
		t.Fatalf("EmptyCall: %v (the resolver did not dial the grpc endpoint)", err)
	}
	if svc.served.Load() != 1 {
		t.Fatalf("served %d", svc.served.Load())
	}
}
