package grpcdrain_test

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/drainkit/drainkit/grpcdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
)

// WithIdentity: unary calls and streams carry "<service>/<instance id>" in
// their response header metadata (also a call whose handler fails); health
// checks and a server without it carry nothing.
func TestWithIdentityNamesTheInstance(t *testing.T) {
	tm := timings(time.Second, 2*time.Second)
	svc := &testService{stream: func(_ *testpb.StreamingOutputCallRequest, ss grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
		return ss.Send(&testpb.StreamingOutputCallResponse{})
	}}
	in := start(t, tm, svc, grpcdrain.WithIdentity("orders", "orders-1"))
	c := testpb.NewTestServiceClient(dial(t, in.addr))
	want := "orders/orders-1"

	var md metadata.MD
	if _, err := c.EmptyCall(ctxTimeout(t, 5*time.Second), &testpb.Empty{}, grpc.Header(&md)); err != nil {
		t.Fatal(err)
	}
	if got := md.Get(registry.IdentityMetadata); len(got) != 1 || got[0] != want {
		t.Errorf("unary call's header %v, want %s: %q", md, registry.IdentityMetadata, want)
	}
	md = nil
	if _, err := c.UnimplementedCall(ctxTimeout(t, 5*time.Second), &testpb.Empty{}, grpc.Header(&md)); err == nil {
		t.Fatal("UnimplementedCall succeeded")
	}
	if got := md.Get(registry.IdentityMetadata); len(got) != 1 || got[0] != want {
		t.Errorf("failed call's header %v, want %s: %q", md, registry.IdentityMetadata, want)
	}
	st, err := c.StreamingOutputCall(ctxTimeout(t, 5*time.Second), &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if md, err = st.Header(); err != nil {
		t.Fatal(err)
	} else if got := md.Get(registry.IdentityMetadata); len(got) != 1 || got[0] != want {
		t.Errorf("stream's header %v, want %s: %q", md, registry.IdentityMetadata, want)
	}
	md = nil
	if _, err := healthpb.NewHealthClient(dial(t, in.addr)).Check(ctxTimeout(t, 5*time.Second), &healthpb.HealthCheckRequest{}, grpc.Header(&md)); err != nil {
		t.Fatal(err)
	}
	if got := md.Get(registry.IdentityMetadata); len(got) != 0 {
		t.Errorf("health check's header carries %q, want none", got)
	}

	plain := start(t, tm, nil)
	md = nil
	if _, err := testpb.NewTestServiceClient(dial(t, plain.addr)).EmptyCall(ctxTimeout(t, 5*time.Second), &testpb.Empty{}, grpc.Header(&md)); err != nil {
		t.Fatal(err)
	}
	if got := md.Get(registry.IdentityMetadata); len(got) != 0 {
		t.Errorf("a server without WithIdentity sends %q", got)
	}
}

// statusRegistrar is a registrar that registers nothing and reports the
// instance it would register, as registry/consul's and etcd's do.
type statusRegistrar struct{ service, id string }

func (statusRegistrar) Sync(context.Context, lifecycle.Transition) error { return nil }
func (statusRegistrar) Deregister(context.Context) error                 { return nil }
func (r statusRegistrar) StatusDetail() any {
	return registry.Status{Service: r.service, ID: r.id}
}

// Without WithIdentity, a server names the instance its lifecycle's first
// registrar registers (the root package's rule for HTTP); WithIdentity("",
// "") turns that off.
func TestIdentityFromTheFirstRegistrar(t *testing.T) {
	tm := timings(time.Second, 2*time.Second)
	header := func(opts ...grpcdrain.Option) []string {
		in := setup(t, tm, nil, opts...)
		in.lc.AddRegistrar("first", statusRegistrar{"orders", "orders-7"})
		in.lc.AddRegistrar("second", statusRegistrar{"payments", "payments-1"})
		in.run()
		var md metadata.MD
		if _, err := testpb.NewTestServiceClient(dial(t, in.addr)).EmptyCall(ctxTimeout(t, 5*time.Second), &testpb.Empty{}, grpc.Header(&md)); err != nil {
			t.Fatal(err)
		}
		return md.Get(registry.IdentityMetadata)
	}
	if got := header(); len(got) != 1 || got[0] != "orders/orders-7" {
		t.Errorf("identity %q, want the first registrar's orders/orders-7", got)
	}
	if got := header(grpcdrain.WithIdentity("", "")); len(got) != 0 {
		t.Errorf("identity %q with WithIdentity(\"\", \"\"), want none", got)
	}
}

// A call to a method the server lacks (an unknown service, or an unknown
// method of a known one) is answered UNIMPLEMENTED, with grpc-go's message,
// and its header names the instance like any other answer: a consumer that
// reached an address another service took over can tell. A server without
// the service (payments serves health only) and one with it but not the
// method are both checked; a handler of the caller's
// (grpc.UnknownServiceHandler) replaces grpcdrain's and keeps the identity.
func TestIdentityOnUnknownMethods(t *testing.T) {
	tm := timings(time.Second, 2*time.Second)
	payments := setupWith(t, tm, func(lc *lifecycle.Lifecycle, ln net.Listener) *grpcdrain.Server {
		return grpcdrain.New(lc, ln, nil, grpcdrain.WithIdentity("payments", "payments-1"))
	}).run()
	orders := start(t, tm, nil, grpcdrain.WithIdentity("orders", "orders-1"))
	cases := []struct {
		name, addr, want, msg string
		call                  func(c testpb.TestServiceClient, opts ...grpc.CallOption) error
	}{
		{"unknown service", payments.addr, "payments/payments-1", "unknown service grpc.testing.TestService",
			func(c testpb.TestServiceClient, opts ...grpc.CallOption) error {
				_, err := c.EmptyCall(ctxTimeout(t, 5*time.Second), &testpb.Empty{}, opts...)
				return err
			}},
		{"unknown method", orders.addr, "orders/orders-1", "unknown method NoSuchCall for service grpc.testing.TestService",
			func(_ testpb.TestServiceClient, opts ...grpc.CallOption) error {
				return dial(t, orders.addr).Invoke(ctxTimeout(t, 5*time.Second), "/grpc.testing.TestService/NoSuchCall", &testpb.Empty{}, &testpb.Empty{}, opts...)
			}},
	}
	for _, c := range cases {
		var md metadata.MD
		err := c.call(testpb.NewTestServiceClient(dial(t, c.addr)), grpc.Header(&md))
		if st, _ := status.FromError(err); st.Code() != codes.Unimplemented || st.Message() != c.msg {
			t.Errorf("%s: %v, want UNIMPLEMENTED %q", c.name, err, c.msg)
		}
		if got := md.Get(registry.IdentityMetadata); len(got) != 1 || got[0] != c.want {
			t.Errorf("%s: header %v, want %s: %q", c.name, md, registry.IdentityMetadata, c.want)
		}
	}

	proxy := setupWith(t, tm, func(lc *lifecycle.Lifecycle, ln net.Listener) *grpcdrain.Server {
		return grpcdrain.New(lc, ln, nil, grpcdrain.WithIdentity("proxy", "proxy-1"),
			grpcdrain.WithServerOptions(grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error {
				return status.Error(codes.PermissionDenied, "the proxy's own")
			})))
	}).run()
	var md metadata.MD
	_, err := testpb.NewTestServiceClient(dial(t, proxy.addr)).EmptyCall(ctxTimeout(t, 5*time.Second), &testpb.Empty{}, grpc.Header(&md))
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("the caller's unknown-service handler: %v, want its PERMISSION_DENIED", err)
	}
	if got := md.Get(registry.IdentityMetadata); len(got) != 1 || got[0] != "proxy/proxy-1" {
		t.Errorf("the caller's unknown-service handler: header %v, want proxy/proxy-1", md)
	}
}
