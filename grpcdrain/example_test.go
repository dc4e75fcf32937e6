package grpcdrain_test

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/drainkit/drainkit/grpcdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"google.golang.org/grpc"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// A service's main: the lifecycle runs the gRPC server and drains it on
// SIGTERM.
func ExampleNew() {
	run := func() int {
		lc, err := lifecycle.New(lifecycle.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		ln, err := net.Listen("tcp", ":9090")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		svc := &testService{} // the service implementation, shared by every grpc.Server
		lc.AddServer("grpc", grpcdrain.New(lc, ln, func(gs *grpc.Server) {
			testpb.RegisterTestServiceServer(gs, svc)
		}, grpcdrain.WithHealthServices(testpb.TestService_ServiceDesc.ServiceName)))
		return lifecycle.ExitCode(lc.Run(context.Background()))
	}
	_ = run // os.Exit(run()) in main
}

// A server-streaming handler ends its stream when the drain begins, so the
// client re-opens it on a new connection, which leads to an instance that
// stays.
func ExampleDraining() {
	_ = func(req *testpb.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
		updates := make(chan *testpb.StreamingOutputCallResponse) // the application's feed
		for {
			select {
			case <-grpcdrain.Draining(ss.Context()):
				return nil // the client sees the stream end with OK and re-opens it
			case <-ss.Context().Done():
				return ss.Context().Err()
			case u := <-updates:
				if err := ss.Send(u); err != nil {
					return err
				}
			}
		}
	}
}
