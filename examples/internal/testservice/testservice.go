// Package testservice is the gRPC service the examples serve: grpc-go's
// interop TestService, where EmptyCall answers at once and UnaryCall sleeps
// ResponseSize milliseconds (at most 10 s), and panics for a negative
// ResponseSize, a handler bug that a recovery interceptor or middleware
// turns into an error while the process keeps serving; FullDuplexCall is a
// bidirectional stream that echoes each message's payload.
package testservice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// Service implements testpb.TestServiceServer (EmptyCall, UnaryCall and
// FullDuplexCall).
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

// FullDuplexCall answers each message with one carrying the same payload,
// until the client closes its side (the stream then ends with OK) or the
// stream fails.
func (Service) FullDuplexCall(stream grpc.BidiStreamingServer[testpb.StreamingOutputCallRequest, testpb.StreamingOutputCallResponse]) error {
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := stream.Send(&testpb.StreamingOutputCallResponse{Payload: req.GetPayload()}); err != nil {
			return err
		}
	}
}
