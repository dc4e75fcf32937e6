package grpcresolver_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/consumer/grpcresolver"
	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/internal/testpoll"
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

// Issue 30 item 7: a view that lists instances none of which serves a
// "grpc" endpoint (HTTP-only registrations, or a Source filtered to
// "http") leaves grpc-go no address, and every call fails with "no children
// to pick from". The resolver says so once per streak (naming the service,
// the scheme it dials and the schemes offered) however many such views
// arrive, and its Status shows it; a view with a gRPC endpoint ends it.
func TestResolverReportsViewWithoutItsScheme(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	testpb.RegisterTestServiceServer(gs, &service{})
	go func() { _ = gs.Serve(ln) }()
	defer gs.Stop()
	port := ln.Addr().(*net.TCPAddr).Port
	httpOnly := func(id string) *registry.Instance {
		return &registry.Instance{ID: id, Address: "127.0.0.1", Port: port,
			Endpoints: []registry.Endpoint{{Scheme: "http", Address: "127.0.0.1", Port: port}}}
	}
	reg := newTestRegistry()
	reg.set("orders-1", httpOnly("orders-1"))
	lg, logs := testlog.New(t, "resolver log")
	b, err := grpcresolver.NewBuilder(grpcresolver.Options{
		Source:  func(string) (registry.Source, error) { return reg, nil },
		Watcher: consumer.WatcherOptions{Logger: lg, FullReadInterval: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient("drainkit:///orders", append(grpcresolver.DialOptions(b), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := testpb.NewTestServiceClient(conn)
	call := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := client.EmptyCall(ctx, &testpb.Empty{})
		return err
	}
	if err := call(); err == nil {
		t.Fatal("EmptyCall with only an http endpoint listed succeeded")
	}
	reg.set("orders-2", httpOnly("orders-2")) // a second blind view
	status := func() grpcresolver.Status {
		t.Helper()
		ss := b.Status("orders")
		if len(ss) != 1 {
			t.Fatalf("Status(orders): %d resolvers, want 1", len(ss))
		}
		return ss[0]
	}
	testpoll.Eventually(t, 10*time.Second, "the second view", func() (bool, string) { s := status(); return s.Instances == 2, fmt.Sprint(s) })
	s := status()
	if !s.Endpoints.Blind() || s.Endpoints.Scheme != "grpc" || s.Endpoints.Missing != 2 || !slices.Equal(s.Endpoints.Offered, []string{"http"}) || s.Addresses != 0 {
		t.Fatalf("status %+v, want 2 instances, both without a grpc endpoint (offered: http), no address", s)
	}
	const line = "none serves the endpoint scheme this consumer dials"
	if n := strings.Count(logs.String(), line); n != 1 || !strings.Contains(logs.String(), "service=orders scheme=grpc instances=1 offered=http") {
		t.Fatalf("%d log lines %q, want 1 naming service, scheme and offered schemes:\n%s", n, line, logs)
	}

	in := httpOnly("orders-2")
	in.Endpoints = append(in.Endpoints, registry.Endpoint{Scheme: "grpc", Address: "127.0.0.1", Port: port})
	reg.set("orders-2", in)
	testpoll.Eventually(t, 10*time.Second, "an address for orders-2", func() (bool, string) { s := status(); return s.Addresses == 1, fmt.Sprint(s) })
	if err := call(); err != nil {
		t.Fatalf("EmptyCall with a grpc endpoint listed: %v", err)
	}
	if s := status(); s.Endpoints.Blind() || s.Endpoints.Missing != 1 {
		t.Errorf("status %+v, want 1 instance without a grpc endpoint, not blind", s)
	}
	if !strings.Contains(logs.String(), "no longer lists only instances without the endpoint scheme") {
		t.Errorf("the streak's end was not logged:\n%s", logs)
	}
}
