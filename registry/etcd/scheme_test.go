package etcd_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/consumer/grpcresolver"
	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/internal/testpoll"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/etcd"
	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
)

// grpcOnlyProvider starts a real gRPC server on 127.0.0.1 and registers it
// in s through a Registrar as a gRPC-only instance of service (one "grpc"
// endpoint, as a kratos gRPC server or a drainkit program with only
// WithServer registers), READY.
func grpcOnlyProvider(t *testing.T, s *etcdtest.Server, service string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	healthpb.RegisterHealthServer(gs, health.NewServer())
	go func() { _ = gs.Serve(ln) }()
	t.Cleanup(gs.Stop)
	port := ln.Addr().(*net.TCPAddr).Port
	o, _ := testOptions(t, s, service, port)
	o.SetEndpoints([]registry.Endpoint{{Scheme: "grpc", Port: port}})
	if err := syncTo(t, newRegistrar(t, o), lifecycle.Ready, lifecycle.CauseChecks); err != nil {
		t.Fatal(err)
	}
}

// Issue 30 item 7: the README's `etcd.NewSource(client, "orders",
// etcd.WatchOptions{})` feeding grpcresolver, with a gRPC-only provider
// registered through registry/etcd: the provider is called. Before, the
// Source's default scheme was "http": it left the provider out, and every
// call failed with "no children to pick from", nothing logged.
func TestREADMESourceFeedsGRPCResolver(t *testing.T) {
	s := etcdtest.Start(t)
	grpcOnlyProvider(t, s, "orders")
	client := s.Client(t)
	b, err := grpcresolver.NewBuilder(grpcresolver.Options{
		Source: func(service string) (registry.Source, error) {
			return etcd.NewSource(client, service, etcd.WatchOptions{}), nil
		},
		Watcher: consumer.WatcherOptions{Logger: slog.New(slog.DiscardHandler), FullReadInterval: -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient("drainkit:///orders", append(grpcresolver.DialOptions(b), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{}, grpc.WaitForReady(true)); err != nil {
		t.Fatalf("health Check through the resolver: %v; status %+v", err, b.Status("orders"))
	}
	if ss := b.Status("orders"); len(ss) != 1 || ss[0].Addresses != 1 || ss[0].Endpoints.Missing != 0 {
		t.Errorf("resolver status %+v, want one address and nothing missing", ss)
	}
}

// Issue 30 item 7: an HTTP consumer (consumer.Transport, scheme "http")
// of a service whose only instance registered through registry/etcd serves
// gRPC alone finds no instance to call. It says so once, naming the
// service, the scheme it dials and the schemes offered, however many views
// arrive, and its Status shows the gap; the provider leaving ends it.
func TestHTTPConsumerOfGRPCOnlyProviderSaysSo(t *testing.T) {
	s := etcdtest.Start(t)
	grpcOnlyProvider(t, s, "orders")
	lg, logs := testlog.New(t, "consumer log")
	w, err := consumer.NewWatcher(consumer.WatcherOptions{Source: etcd.NewSource(s.Client(t), "orders", etcd.WatchOptions{}),
		Service: "orders", Logger: lg, FullReadInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tr, err := consumer.NewTransport(w, "", consumer.Options{Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := w.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	testpoll.Eventually(t, 10*time.Second, "the provider listed", func() (bool, string) {
		st := tr.Status()
		return st.Instances == 1, st.String()
	})
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	for range 3 {
		resp, err := hc.Get("http://orders/x")
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, consumer.ErrNoInstance) {
			t.Fatalf("GET: %v, want ErrNoInstance (the only instance serves no http endpoint)", err)
		}
	}
	// A second provider, gRPC-only as well: another view, no second log line.
	grpcOnlyProvider(t, s, "orders")
	testpoll.Eventually(t, 10*time.Second, "the second provider listed", func() (bool, string) {
		st := tr.Status()
		return st.Instances == 2, st.String()
	})
	st := tr.Status()
	if g := st.Endpoints; !g.Blind() || g.Scheme != "http" || g.Missing != 2 || !slices.Equal(g.Offered, []string{"grpc"}) {
		t.Fatalf("status endpoints %+v, want both instances missing scheme http, offering grpc", g)
	}
	if line := st.String(); !strings.Contains(line, "scheme=http without_scheme=2 offered=grpc") {
		t.Errorf("status line %q: want the gap in it", line)
	}
	const msg = "none serves the endpoint scheme this consumer dials"
	if n := strings.Count(logs.String(), msg); n != 1 || !strings.Contains(logs.String(), "service=orders scheme=http instances=1 offered=grpc") {
		t.Fatalf("%d log lines %q, want 1 naming service, scheme and the schemes offered:\n%s", n, msg, logs)
	}
}
