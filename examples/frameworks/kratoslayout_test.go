package frameworks_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testpb "google.golang.org/grpc/interop/grpc_testing"

	"github.com/drainkit/drainkit/internal/childtest"
)

// layoutConfig writes a kratos-layout configs/config.yaml with the given
// server addresses into a new directory and returns the directory.
func layoutConfig(t *testing.T, httpAddr, grpcAddr string) string {
	t.Helper()
	dir := t.TempDir()
	yaml := "server:\n  http:\n    addr: " + httpAddr + "\n    timeout: 1s\n  grpc:\n    addr: " + grpcAddr +
		"\n    timeout: 1s\ndata:\n  database:\n    driver: mysql\n    source: root:root@tcp(127.0.0.1:3306)/test\n"
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestKratosLayoutDefaults: the kratos-layout recipe's listeners default
// to the configuration file's addresses (--help says so).
func TestKratosLayoutDefaults(t *testing.T) {
	out, err := exec.Command(bins["kratoslayout"], "--conf", layoutConfig(t, "127.0.0.1:18000", "127.0.0.1:19000"), "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("--help: %v\n%s", err, out)
	}
	for _, want := range []string{`--http-addr string`, `(default "127.0.0.1:18000")`, `--grpc-addr string`, `(default "127.0.0.1:19000")`, `--conf string`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--help lacks %s:\n%s", want, out)
		}
	}
}

// TestKratosLayoutServes: the program docs/frameworks.md's "kratos-layout
// with wire" recipe builds (examples/frameworks/kratoslayout: the layout's
// providers, wired by wireApp, started by drainkit.Main on the addresses of
// its configuration file) serves kratos's HTTP route, a unary gRPC call, a
// bidirectional stream and a grpc.health.v1 Watch stream; SIGTERM then
// drains it: the Watch stream says NOT_SERVING, wire's cleanup runs as the
// stop hook and the process exits 0. The recipe once built the server
// without kgrpc.Endpoint, and kratos's stream interceptor crashed the
// process on the first stream (exit 2).
func TestKratosLayoutServes(t *testing.T) {
	// No --http-addr or --grpc-addr: the file's addresses are the listeners'.
	c := childtest.StartWorker(t, bins["kratoslayout"], noWindow, "--conf", layoutConfig(t, "127.0.0.1:0", "127.0.0.1:0"))
	started := c.LogLines("started")[0]
	addr, _ := started["grpc"].(string)
	for name, a := range map[string]string{"http": c.HTTP, "grpc": addr} {
		if host, _, err := net.SplitHostPort(a); err != nil || host != "127.0.0.1" {
			t.Fatalf("the %s listener is on %q, not on the file's 127.0.0.1:0", name, a)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	resp, err := c.Client.Get("http://" + c.HTTP + "/helloworld")
	if err != nil {
		t.Fatalf("GET /helloworld: %v (child %s)", err, exited(c))
	}
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "hello\n" {
		t.Fatalf("GET /helloworld: %d %q, want 200 \"hello\\n\"", resp.StatusCode, body)
	}

	cc, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	client := testpb.NewTestServiceClient(cc)
	if _, err := client.EmptyCall(ctx, &testpb.Empty{}); err != nil {
		t.Fatalf("EmptyCall: %v (child %s)", err, exited(c))
	}
	echo(ctx, t, c, "layout client", client)

	watch, err := healthpb.NewHealthClient(cc).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatalf("health Watch: %v (child %s)", err, exited(c))
	}
	if st, err := watch.Recv(); err != nil || st.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health Watch: %v %v, want SERVING (child %s)", st.GetStatus(), err, exited(c))
	}

	c.Signal(syscall.SIGTERM)
	if st, err := watch.Recv(); err != nil || st.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health Watch after SIGTERM: %v %v, want NOT_SERVING (child %s)", st.GetStatus(), err, exited(c))
	}
	if code := c.WaitExit(20 * time.Second); code != 0 {
		t.Fatalf("exit %d after the drain, want 0", code)
	}
	if !strings.Contains(c.Logs(), "closing the data resources") {
		t.Error("wire's cleanup (the data layer's) did not run as the stop hook")
	}
}
