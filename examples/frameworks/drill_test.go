package frameworks_test

// The kratos and go-zero examples under drainkit, as real child processes:
// `drainkit drill --exec` loses no request on either, the drill's shutdown
// baseline (the same application stopped the way its framework does it,
// --framework-shutdown) loses some, which proves the check can fail, and
// both frameworks' recovery middleware leaves the drain's counts right.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"

	"github.com/drainkit/drainkit/internal/childtest"
)

// bins holds the drainkit CLI (built in the root module) and the
// examples (built here), once for all tests.
var bins = map[string]string{}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "drainkit-frameworks-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The go command that runs this test: on PATH, else under $GOROOT,
	// which `go test` sets.
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	for name, build := range map[string][]string{
		"drainkit":     {"build", "-C", "../../cmd/drainkit", "-o", filepath.Join(dir, "drainkit"), "."},
		"kratos":       {"build", "-o", filepath.Join(dir, "kratos"), "./kratos"},
		"gozero":       {"build", "-o", filepath.Join(dir, "gozero"), "./gozero"},
		"kratoslayout": {"build", "-o", filepath.Join(dir, "kratoslayout"), "./kratoslayout/cmd/server"},
	} {
		cmd := exec.Command(goBin, build...)
		// This module is outside the root's go.work (kratos and go-zero
		// would raise the workspace's versions), like bench/anchors; the
		// CLI builds in the workspace, as `go run ./cmd/drainkit` does.
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if name == "drainkit" {
			cmd.Env = append(os.Environ(), "GOWORK=")
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", name, err, out)
			_ = os.RemoveAll(dir)
			os.Exit(1)
		}
		bins[name] = filepath.Join(dir, name)
	}
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) { _ = os.RemoveAll(dir); os.Exit(code) }))
}

// drillEnv shortens the drainkit replicas' propagation window from its
// 5 s default to 1 s: the window still lasts while late requests arrive
// (the quiet rule, up to propagation.max), so no request is lost that the
// default would save, and each of the three drains of a run takes about
// a second instead of five (the framework's own shutdown has no window).
var drillEnv = []string{"DRAINKIT_PROPAGATION_MIN=1s"}

// drill runs `drainkit drill --exec bin` with the exec args, in drillEnv,
// and returns its exit status and output.
func drill(t *testing.T, bin string, execArgs ...string) (int, string) {
	t.Helper()
	args := []string{"drill", "--exec", bin}
	for _, a := range execArgs {
		args = append(args, "--exec-arg="+a)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bins["drainkit"], args...)
	cmd.Env = append(os.Environ(), drillEnv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("drill %v: no result within 3m:\n%s", args, out.String())
	}
	return cmd.ProcessState.ExitCode(), out.String()
}

// The gRPC transport needs a port of its own per replica: the drill runs
// several side by side.
var kratosArgs = []string{"--grpc-addr=127.0.0.1:0"}

// TestDrillKratos: a kratos app (HTTP and gRPC transports, kratos recovery
// middleware) under drainkit loses 0 requests in a rolling restart; the same
// app under kratos.App's own shutdown loses some.
func TestDrillKratos(t *testing.T) {
	if code, out := drill(t, bins["kratos"], kratosArgs...); code != 0 || !strings.Contains(out, "PASS: 0 of") {
		t.Errorf("drill --exec kratos: exit %d, want 0 and no request lost:\n%s", code, out)
	}
	if code, out := drill(t, bins["kratos"], append([]string{"--framework-shutdown"}, kratosArgs...)...); code != 1 {
		t.Errorf("drill --exec kratos --framework-shutdown: exit %d, want 1 (requests lost):\n%s", code, out)
	}
}

// TestDrillGoZero: a go-zero REST service under drainkit loses 0 requests
// in a rolling restart; the same service under go-zero's own shutdown loses
// some.
func TestDrillGoZero(t *testing.T) {
	if code, out := drill(t, bins["gozero"]); code != 0 || !strings.Contains(out, "PASS: 0 of") {
		t.Errorf("drill --exec gozero: exit %d, want 0 and no request lost:\n%s", code, out)
	}
	if code, out := drill(t, bins["gozero"], "--framework-shutdown"); code != 1 {
		t.Errorf("drill --exec gozero --framework-shutdown: exit %d, want 1 (requests lost):\n%s", code, out)
	}
}

// noWindow keeps the children's drains short.
var noWindow = []string{"DRAINKIT_PROPAGATION_MIN=0s", "DRAINKIT_PROPAGATION_QUIET=0s", "DRAINKIT_PROPAGATION_MAX=0s"}

// TestRecoveryKeepsCountsRight: a handler that panics, once over HTTP and
// (kratos) once over gRPC, is answered by the framework's recovery
// middleware (HTTP 500; over gRPC kratos's error for its 500), the process
// keeps serving, and the drain that follows finds
// nothing in flight and exits 0: no count skipped by the panic.
func TestRecoveryKeepsCountsRight(t *testing.T) {
	for _, name := range []string{"kratos", "gozero"} {
		t.Run(name, func(t *testing.T) {
			var args []string
			if name == "kratos" {
				args = []string{"--grpc-addr", "127.0.0.1:0"}
			}
			c := childtest.Start(t, bins[name], noWindow, args...)
			get := func(path string) int {
				resp, err := c.Client.Get("http://" + c.HTTP + path)
				if err != nil {
					t.Fatalf("GET %s: %v", path, err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			if code := get("/panic"); code != http.StatusInternalServerError {
				t.Errorf("GET /panic: %d, want 500 from the recovery middleware", code)
			}
			if name == "kratos" {
				grpcPanic(t, c)
			}
			if code := get("/"); code != http.StatusOK {
				t.Errorf("GET / after the panic: %d", code)
			}
			c.Signal(syscall.SIGTERM)
			if code := c.WaitExit(20 * time.Second); code != 0 {
				t.Fatalf("exit %d after the panics (a count the panic skipped keeps the drain waiting):\n%s", code, c.Logs())
			}
		})
	}
}

// grpcPanic calls UnaryCall with a negative size (the handler panics) on
// the kratos child's gRPC listener, found in its start line.
func grpcPanic(t *testing.T, c *childtest.Child) {
	t.Helper()
	lines := c.LogLines("started")
	addr, _ := lines[0]["grpc"].(string)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = testpb.NewTestServiceClient(conn).UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: -1})
	if code := status.Code(err); code == codes.OK || code == codes.Unavailable || code == codes.DeadlineExceeded {
		t.Errorf("UnaryCall that panics: %v, want the recovery middleware's error", err)
	}
	if _, err := testpb.NewTestServiceClient(conn).EmptyCall(ctx, &testpb.Empty{}); err != nil {
		t.Errorf("EmptyCall after the panic: %v", err)
	}
}
