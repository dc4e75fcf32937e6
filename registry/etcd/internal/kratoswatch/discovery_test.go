package kratoswatch_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-kratos/kratos/v2/registry"
	kgrpc "github.com/go-kratos/kratos/v2/transport/grpc"
	"go.uber.org/goleak"
	testpb "google.golang.org/grpc/interop/grpc_testing"

	"github.com/drainkit/drainkit/internal/childtest"
	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
	"github.com/drainkit/drainkit/registry/etcd/internal/kratoswatch"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// buildExample builds examples/grpcservice in drainkit's own module (the
// directory above whose go.mod is github.com/drainkit/drainkit), with the
// workspace, if any, that builds it there.
func buildExample(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for !isRoot(dir) {
		if parent := filepath.Dir(dir); parent != dir {
			dir = parent
			continue
		}
		t.Fatal("no drainkit module above the test's directory")
	}
	bin := filepath.Join(t.TempDir(), "grpcservice")
	cmd := exec.Command("go", "build", "-o", bin, "./examples/grpcservice")
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOWORK=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building examples/grpcservice: %v\n%s", err, out)
	}
	return bin
}

func isRoot(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "go.mod"))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	return sc.Scan() && strings.TrimSpace(sc.Text()) == "module github.com/drainkit/drainkit"
}

// nextUntil calls w.Next until cond holds for its answer, failing the test
// if the watcher fails or d passes first.
func nextUntil(t *testing.T, w registry.Watcher, d time.Duration, what string, cond func([]*registry.ServiceInstance) bool) []*registry.ServiceInstance {
	t.Helper()
	type answer struct {
		ins []*registry.ServiceInstance
		err error
	}
	deadline := time.After(d)
	for {
		ch := make(chan answer, 1)
		go func() { ins, err := w.Next(); ch <- answer{ins, err} }()
		select {
		case a := <-ch:
			if a.err != nil {
				t.Fatalf("%s: Next: %v", what, a.err)
			}
			if cond(a.ins) {
				return a.ins
			}
		case <-deadline:
			t.Fatalf("%s: not within %s", what, d)
		}
	}
}

// TestKratosDiscoverySeesOneInstance: kratos's etcd discovery sees a
// drainkit process serving HTTP and gRPC as one instance with both
// endpoints; kratos's own gRPC client, resolving through that discovery,
// picks the grpc:// endpoint and calls it; SIGTERM makes the instance
// leave the discovery at the drain's start, while the process still
// serves (within propagation.min), and the drain ends with exit 0.
func TestKratosDiscoverySeesOneInstance(t *testing.T) {
	e := etcdtest.Start(t)
	bin := buildExample(t)
	c := childtest.Start(t, bin, append(childtest.Timings(), e.Env()...), "--grpc-addr", "127.0.0.1:0")
	started := c.LogLines("started")[0]
	want := []string{"http://" + started["http"].(string), "grpc://" + started["grpc"].(string)}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d := kratoswatch.New(e.Client(t), "")
	w, err := d.Watch(ctx, "grpcservice")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ins := nextUntil(t, w, 10*time.Second, "the instance registered", func(ins []*registry.ServiceInstance) bool { return len(ins) > 0 })
	if len(ins) != 1 || !slices.Equal(ins[0].Endpoints, want) || ins[0].Name != "grpcservice" {
		t.Fatalf("kratos sees %d instances, first %+v; want one with endpoints %q", len(ins), ins[0], want)
	}

	conn, err := kgrpc.DialInsecure(ctx, kgrpc.WithEndpoint("discovery:///grpcservice"), kgrpc.WithDiscovery(d))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := testpb.NewTestServiceClient(conn).EmptyCall(ctx, &testpb.Empty{}); err != nil {
		t.Fatalf("kratos's gRPC client through its discovery: %v", err)
	}

	sig := time.Now()
	c.Signal(syscall.SIGTERM)
	nextUntil(t, w, childtest.PropagationMin, "the instance gone from kratos's discovery after SIGTERM", func(ins []*registry.ServiceInstance) bool { return len(ins) == 0 })
	lost := time.Since(sig)
	if code, _ := c.AdminDo("GET", "/livez", nil); code != 200 {
		t.Errorf("GET /livez %d once kratos lost the instance; want the process still serving its window", code)
	}
	t.Logf("kratos's discovery lost the instance %s after SIGTERM", lost.Round(time.Millisecond))
	if dereg, _, _ := c.CleanDrain(childtest.Budget + 5*time.Second); dereg.At > time.Second {
		t.Errorf("deregistered at %s; want at the drain's start", dereg.At)
	}
}
