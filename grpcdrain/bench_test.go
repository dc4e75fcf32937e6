package grpcdrain_test

import (
	"context"
	"log/slog"
	"net"
	"testing"

	"github.com/drainkit/drainkit/grpcdrain"
	"github.com/drainkit/drainkit/internal/cpubench"
	"github.com/drainkit/drainkit/lifecycle"
	"google.golang.org/grpc"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
)

var (
	benchInfo    = &grpc.UnaryServerInfo{FullMethod: testpb.TestService_EmptyCall_FullMethodName}
	benchSInfo   = &grpc.StreamServerInfo{FullMethod: testpb.TestService_StreamingOutputCall_FullMethodName, IsServerStream: true}
	benchReq     = &testpb.Empty{}
	benchHandler = func(context.Context, any) (any, error) { return benchReq, nil }
	benchSHandle = func(any, grpc.ServerStream) error { return nil }
	// benchCtx carries a TCP peer and a user-agent, as grpc-go's server
	// gives every call: grpcdrain reads the peer (the caller of the
	// propagation window's evidence).
	benchCtx = metadata.NewIncomingContext(
		peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 40312}}),
		metadata.Pairs("user-agent", "grpc-go/1.84.0"))
)

// nopStream is a reusable grpc.ServerStream.
type nopStream struct{ ctx context.Context }

func (s nopStream) SetHeader(metadata.MD) error  { return nil }
func (s nopStream) SendHeader(metadata.MD) error { return nil }
func (s nopStream) SetTrailer(metadata.MD)       {}
func (s nopStream) Context() context.Context     { return s.ctx }
func (s nopStream) SendMsg(any) error            { return nil }
func (s nopStream) RecvMsg(any) error            { return nil }

// perCore returns a copy of info on a memory page of its own. grpc-go
// allocates the info of each call on the core that serves it, and
// grpcdrain picks a call's in-flight stripe from the page of that
// allocation (syncx.StripeOf), so calls served on different cores mostly
// use different stripes; one copy per benchmark goroutine, each on its own
// page, reproduces that without an allocation per call.
func perCore[T any](info T) *T {
	p := new(struct {
		_    [8192]byte
		info T
	})
	p.info = info
	return &p.info
}

// interceptors returns grpcdrain's interceptors, as installed on every
// grpc.Server it builds (not serving).
func interceptors(b *testing.B) (grpc.UnaryServerInterceptor, grpc.StreamServerInterceptor) {
	lc, err := lifecycle.New(lifecycle.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ln.Close() })
	return grpcdrain.New(lc, ln, nil).Interceptors()
}

// BenchmarkUnaryInterceptor compares calling a unary handler directly (bare)
// with calling it through grpcdrain's interceptor (drainkit): arrival
// report, in-flight count, completion.
func BenchmarkUnaryInterceptor(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		unary := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			return h(ctx, req)
		}
		benchUnary(b, unary)
	})
	b.Run("drainkit", func(b *testing.B) {
		unary, _ := interceptors(b)
		benchUnary(b, unary)
	})
}

func benchUnary(b *testing.B, unary grpc.UnaryServerInterceptor) {
	b.Run("seq", func(b *testing.B) {
		ctx := benchCtx
		b.ReportAllocs()
		cpubench.Report(b, func() {
			for b.Loop() {
				_, _ = unary(ctx, benchReq, benchInfo, benchHandler)
			}
		})
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		cpubench.Report(b, func() {
			b.RunParallel(func(pb *testing.PB) {
				ctx := benchCtx
				info := perCore(*benchInfo)
				for pb.Next() {
					_, _ = unary(ctx, benchReq, info, benchHandler)
				}
			})
		})
	})
}

// BenchmarkStreamInterceptor is BenchmarkUnaryInterceptor for streams.
func BenchmarkStreamInterceptor(b *testing.B) {
	b.Run("bare", func(b *testing.B) {
		benchStream(b, func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return h(srv, ss)
		})
	})
	b.Run("drainkit", func(b *testing.B) {
		_, stream := interceptors(b)
		benchStream(b, stream)
	})
}

func benchStream(b *testing.B, stream grpc.StreamServerInterceptor) {
	b.Run("seq", func(b *testing.B) {
		var ss grpc.ServerStream = &nopStream{benchCtx}
		b.ReportAllocs()
		cpubench.Report(b, func() {
			for b.Loop() {
				_ = stream(nil, ss, benchSInfo, benchSHandle)
			}
		})
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		cpubench.Report(b, func() {
			b.RunParallel(func(pb *testing.PB) {
				var ss grpc.ServerStream = &nopStream{benchCtx}
				info := perCore(*benchSInfo)
				for pb.Next() {
					_ = stream(nil, ss, info, benchSHandle)
				}
			})
		})
	})
}

// The request path allocates nothing (a property, not a timing: checked
// here so that a regression fails the tests, not only the benchmarks).
func TestInterceptorsDoNotAllocate(t *testing.T) {
	lc, err := lifecycle.New(lifecycle.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	unary, stream := grpcdrain.New(lc, ln, nil).Interceptors()
	ctx := benchCtx
	var ss grpc.ServerStream = &nopStream{ctx}
	if n := testing.AllocsPerRun(1000, func() { _, _ = unary(ctx, benchReq, benchInfo, benchHandler) }); n != 0 {
		t.Errorf("unary interceptor: %v allocs per call", n)
	}
	if n := testing.AllocsPerRun(1000, func() { _ = stream(nil, ss, benchSInfo, benchSHandle) }); n != 0 {
		t.Errorf("stream interceptor: %v allocs per stream", n)
	}
	// Why the interceptors do not read the user-agent for the caller's
	// identity: grpc-go copies metadata values out of the context.
	ua := testing.AllocsPerRun(1000, func() { _ = metadata.ValueFromIncomingContext(ctx, "user-agent") })
	t.Logf("metadata.ValueFromIncomingContext(user-agent): %v allocs per call", ua)
}
