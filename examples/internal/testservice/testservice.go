// Package testservice is the gRPC service the examples serve: grpc-go's
// interop TestService, where EmptyCall answers at once and UnaryCall sleeps
// ResponseSize milliseconds (at most 10 s), and panics for a negative
// ResponseSize, a handler bug that a recovery interceptor or middleware
// turns into an error while the process keeps serving.
package testservice

import (
	"context"
	"fmt"
	"time"

	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// Service implements testpb.TestServiceServer (EmptyCall and UnaryCall).
type Service struct {
	testpb.UnimplementedTestServiceServer
}

// EmptyCall answers at once.
func (Service) EmptyCall(context.Context, *testpb.Empty) (*testpb.Empty, error) {
	return &testpb.Empty{}, nil
}

// UnaryCall answers after ResponseSize milliseconds (at most 10 s), or when
// the call's context ends; it panics for a negative ResponseSize.
func (Service) UnaryCall(ctx context.Context, req *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	if req.ResponseSize < 0 {
		panic(fmt.Sprintf("negative response size %d", req.ResponseSize))
	}
	t := time.NewTimer(min(time.Duration(req.ResponseSize)*time.Millisecond, 10*time.Second))
	defer t.Stop()
	select {
	case <-t.C:
		return &testpb.SimpleResponse{}, nil
	case <-ctx.Done():
		return nil, status.FromContextError(ctx.Err()).Err()
	}
}
