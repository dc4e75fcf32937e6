package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// binary is the drainkit command built once for all tests, without -race:
// the drill re-executes it as its replicas, as `go run ./cmd/drainkit` would.
var binary string

// The other programs the tests run, built with binary in one go build
// (TestMain), before any test: a build takes every core for seconds, which
// would starve a drill running beside it (tests run in parallel:
// parallelDrill).
var (
	// minimalBin is examples/minimal, the README program: a service built
	// on drainkit.Main, whose own `prestop` command must behave as
	// `drainkit prestop`.
	minimalBin string
	// bookBin is testdata/bookservice, a service configured by the config
	// package only, whose answers and registration the tests choose.
	bookBin string
	// grpcserviceBin is examples/grpcservice (two listeners).
	grpcserviceBin string
	// httpserviceBin is examples/httpservice, the Kubernetes example's
	// binary.
	httpserviceBin string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "drainkit-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The go command that runs this test: on PATH, else under $GOROOT,
	// which `go test` sets.
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	const ex = "github.com/drainkit/drainkit/examples/"
	// go build -o dir/ writes each main package as dir/<its last element>.
	build := exec.Command(gobin, "build", "-o", dir+string(filepath.Separator),
		".", ex+"minimal", ex+"grpcservice", ex+"httpservice", "./testdata/bookservice")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building drainkit and the test programs:", err)
		_ = os.RemoveAll(dir)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "drainkit")
	minimalBin, bookBin = filepath.Join(dir, "minimal"), filepath.Join(dir, "bookservice")
	grpcserviceBin, httpserviceBin = filepath.Join(dir, "grpcservice"), filepath.Join(dir, "httpservice")
	goleak.VerifyTestMain(stopsShared{m}, goleak.Cleanup(func(code int) { _ = os.RemoveAll(dir); os.Exit(code) }))
}

// result is one run of the drainkit binary.
type result struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// drainkit runs the binary with args and extra environment variables, bounded
// by timeout, in its own process group (killed as a whole on timeout).
func drainkit(t *testing.T, timeout time.Duration, env []string, args ...string) result {
	t.Helper()
	return runBinary(t, binary, timeout, env, args...)
}

// runBinary is drainkit for any binary bin.
func runBinary(t *testing.T, bin string, timeout time.Duration, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	start := time.Now()
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start), code: cmd.ProcessState.ExitCode()}
	if ctx.Err() != nil {
		t.Fatalf("%s %v did not finish within %s\nstdout:\n%s\nstderr:\n%s", filepath.Base(bin), args, timeout, r.stdout, r.stderr)
	}
	if err != nil && r.code == 0 {
		t.Fatalf("%s %v: %v", filepath.Base(bin), args, err)
	}
	return r
}

// freeAddr returns a loopback address that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
