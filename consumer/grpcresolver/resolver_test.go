package grpcresolver_test

import (
	"context"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/stats"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/consumer/grpcresolver"
	"github.com/drainkit/drainkit/grpcdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/registry"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.Cleanup(grpcService.RemoveAndExit)) }

// testRegistry is an in-process registry: replicas' lifecycles register in
// it (lifecycle.Registrar) and consumers watch it (registry.Source), with a
// revision that grows with every change.
type testRegistry struct {
	mu   sync.Mutex
	ins  map[string]registry.Instance
	rev  uint64
	subs map[chan struct{}]bool
}

func newTestRegistry() *testRegistry {
	return &testRegistry{ins: map[string]registry.Instance{}, subs: map[chan struct{}]bool{}}
}

func (r *testRegistry) set(id string, in *registry.Instance) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if in == nil {
		delete(r.ins, id)
	} else {
		r.ins[id] = *in
	}
	r.rev++
	for ch := range r.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (r *testRegistry) view() registry.View {
	r.mu.Lock()
	defer r.mu.Unlock()
	v := registry.View{Service: "orders", Instances: []registry.Instance{}, Revision: r.rev, Received: time.Now(), Source: "test"}
	for _, in := range r.ins {
		v.Instances = append(v.Instances, in)
	}
	return v
}

func (r *testRegistry) Watch(ctx context.Context, fn func(registry.View)) error {
	ch := make(chan struct{}, 1)
	r.mu.Lock()
	r.subs[ch] = true
	r.mu.Unlock()
	defer func() { r.mu.Lock(); delete(r.subs, ch); r.mu.Unlock() }()
	fn(r.view())
	for {
		select {
		case <-ch:
			fn(r.view())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// registrar registers one replica in a testRegistry.
type registrar struct {
	r  *testRegistry
	in registry.Instance
}

func (g *registrar) Sync(_ context.Context, t lifecycle.Transition) error {
	if t.To == lifecycle.Ready {
		g.r.set(g.in.ID, &g.in)
	} else {
		g.r.set(g.in.ID, nil)
	}
	return nil
}

func (g *registrar) Deregister(context.Context) error { g.r.set(g.in.ID, nil); return nil }

type service struct {
	testpb.UnimplementedTestServiceServer
	served atomic.Int64
}

func (s *service) EmptyCall(context.Context, *testpb.Empty) (*testpb.Empty, error) {
	s.served.Add(1)
	return &testpb.Empty{}, nil
}

// testCalls is a stats.Handler that counts the test service's calls a
// server got, whether it serves the service or not.
type testCalls struct{ n *atomic.Int64 }

func (c testCalls) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	if strings.HasPrefix(info.FullMethodName, "/grpc.testing.TestService/") {
		c.n.Add(1)
	}
	return ctx
}
func (testCalls) HandleRPC(context.Context, stats.RPCStats)                         {}
func (testCalls) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (testCalls) HandleConn(context.Context, stats.ConnStats)                       {}

// replica is one gRPC server drained by grpcdrain under a lifecycle.
type replica struct {
	lc   *lifecycle.Lifecycle
	svc  *service
	port int
	done chan error
}

// startReplica starts an instance of orders, registered in reg, naming
// itself in its answers (grpcdrain.WithIdentity).
func startReplica(t *testing.T, reg *testRegistry) *replica {
	t.Helper()
	return startReplicaOf(t, reg, "orders")
}

// startReplicaOf starts an instance of the service name, naming itself in
// its answers, registered in reg unless reg is nil.
func startReplicaOf(t *testing.T, reg *testRegistry, name string) *replica {
	t.Helper()
	return startReplicaWith(t, reg, name, true)
}

// startReplicaWith is startReplicaOf; withTest says whether the replica
// serves the test service (else health only: a service that lacks it).
func startReplicaWith(t *testing.T, reg *testRegistry, name string, withTest bool) *replica {
	t.Helper()
	tm := budget.Timings{WarmupTimeout: 5 * time.Second, PropagationMin: 500 * time.Millisecond,
		PropagationMax: 500 * time.Millisecond, DrainTimeout: 2 * time.Second, StopTimeout: time.Second,
		GracePeriod: 8 * time.Second}
	lc, err := lifecycle.New(lifecycle.Options{Timings: tm, Signals: []os.Signal{syscall.SIGUSR2}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	id := name + "-" + strconv.Itoa(port)
	rp := &replica{lc: lc, svc: &service{}, port: port, done: make(chan error, 1)}
	register := func(gs *grpc.Server) { testpb.RegisterTestServiceServer(gs, rp.svc) }
	opts := []grpcdrain.Option{grpcdrain.WithIdentity(name, id)}
	if !withTest {
		// svc.served counts the test service's calls that reached it,
		// answered UNIMPLEMENTED.
		register, opts = nil, append(opts, grpcdrain.WithStatsHandler(testCalls{&rp.svc.served}))
	}
	lc.AddServer("grpc", grpcdrain.New(lc, ln, register, opts...))
	if reg != nil {
		lc.AddRegistrar("test", &registrar{r: reg, in: registry.Instance{ID: id, Address: "127.0.0.1", Port: port}})
	}
	go func() { rp.done <- lc.Run(context.Background()) }()
	t.Cleanup(func() { rp.stop(t) })
	deadline := time.Now().Add(5 * time.Second)
	for lc.State() != lifecycle.Ready {
		if time.Now().After(deadline) {
			t.Fatalf("replica not READY after 5s: %s", lc.State())
		}
		time.Sleep(10 * time.Millisecond) // polling interval
	}
	return rp
}

// stop drains the replica and waits for its Run to return.
func (rp *replica) stop(t *testing.T) {
	_ = rp.lc.Drain("rolling restart")
	select {
	case err := <-rp.done:
		if err != nil {
			t.Errorf("replica drain: %v", err)
		}
		rp.done <- err // later stops return at once
	case <-time.After(15 * time.Second):
		t.Error("replica did not stop within 15s")
	}
}

// dial returns a client of target drainkit:///orders resolved from src,
// with the idempotent methods' retry policy; closed by t's cleanup.
func dial(t *testing.T, src registry.Source, idempotent ...string) testpb.TestServiceClient {
	t.Helper()
	return dialWith(t, src, nil, idempotent...)
}

// dialWith is dial with extra dial options.
func dialWith(t *testing.T, src registry.Source, extra []grpc.DialOption, idempotent ...string) testpb.TestServiceClient {
	t.Helper()
	b, err := grpcresolver.NewBuilder(grpcresolver.Options{
		Source:  func(string) (registry.Source, error) { return src, nil },
		Watcher: consumer.WatcherOptions{Logger: slog.New(slog.DiscardHandler)},
	})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient("drainkit:///orders", append(append(grpcresolver.DialOptions(b, idempotent...),
		grpc.WithTransportCredentials(insecure.NewCredentials())), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return testpb.NewTestServiceClient(conn)
}

// A gRPC client through the resolver during a rolling restart of three
// replicas drained by grpcdrain: 0 failed RPCs.
func TestRollingRestartLosesNoRPC(t *testing.T) {
	reg := newTestRegistry()
	old := []*replica{startReplica(t, reg), startReplica(t, reg), startReplica(t, reg)}
	client := dial(t, reg)

	var calls, failed atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				cctx, ccancel := context.WithTimeout(context.Background(), 3*time.Second)
				_, err := client.EmptyCall(cctx, &testpb.Empty{})
				ccancel()
				calls.Add(1)
				if err != nil {
					failed.Add(1)
					t.Errorf("RPC failed: %v", err)
				}
				time.Sleep(2 * time.Millisecond) // load pacing
			}
		})
	}
	// moreCalls waits until the load made 10 more calls.
	moreCalls := func() {
		want, deadline := calls.Load()+10, time.Now().Add(20*time.Second)
		for calls.Load() < want && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond) // polling interval
		}
	}
	var fresh []*replica
	for _, rp := range old {
		moreCalls()
		fresh = append(fresh, startReplica(t, reg))
		moreCalls()
		rp.stop(t)
	}
	moreCalls() // load on the new replicas only
	cancel()
	wg.Wait()
	served := int64(0)
	for _, rp := range fresh {
		served += rp.svc.served.Load()
	}
	if failed.Load() != 0 || calls.Load() < 70 || served == 0 {
		t.Errorf("%d of %d RPCs failed, new replicas served %d: want 0 failed of at least 70, new replicas serving", failed.Load(), calls.Load(), served)
	}
	t.Logf("%d RPCs during the rolling restart, %d failed", calls.Load(), failed.Load())
}

func TestBuilderOptions(t *testing.T) {
	if _, err := grpcresolver.NewBuilder(grpcresolver.Options{}); err == nil {
		t.Error("NewBuilder without Source: no error")
	}
	b, err := grpcresolver.NewBuilder(grpcresolver.Options{Scheme: "orders-registry",
		Source: func(string) (registry.Source, error) { return newTestRegistry(), nil }})
	if err != nil || b.Scheme() != "orders-registry" {
		t.Fatalf("NewBuilder: %v, scheme %q", err, b.Scheme())
	}
	if grpcresolver.FromWatcher("", nil).Scheme() != grpcresolver.Scheme {
		t.Error("FromWatcher(\"\") does not use the default scheme")
	}
}
