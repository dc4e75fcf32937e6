package main

import (
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/childtest"
	"github.com/drainkit/drainkit/internal/testlog"
)

// startExample starts `drainkit serve --strategy drainkit` (the example
// handlers with the full drain) and waits until /readyz answers 200.
func startExample(t *testing.T, env ...string) (adminAddr string, ex *example) {
	t.Helper()
	adminAddr = freeAddr(t)
	cmd := exec.Command(binary, "serve", "--strategy", "drainkit", "--http-addr", freeAddr(t), "--admin-addr", adminAddr)
	cmd.Env = append(os.Environ(), env...)
	stderr := &testlog.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	ex = &example{exited: exited, stderr: stderr}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	go func() { _ = cmd.Wait(); ex.code = cmd.ProcessState.ExitCode(); close(exited) }()
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.Now().Add(20 * time.Second)
	for {
		resp, err := client.Get("http://" + adminAddr + "/readyz")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == 200 {
				return adminAddr, ex
			}
		}
		select {
		case <-exited:
			t.Fatalf("example exited before it was ready:\n%s", stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("example not ready after 20s:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond) // poll interval, bounded by the deadline
	}
}

// example is a running `drainkit serve`; code is valid once exited is closed.
type example struct {
	exited <-chan struct{}
	code   int
	stderr *testlog.Buffer
}

// TestPrestopReturnsAfterWindow: prestop starts the drain and returns when the
// 1 s window has ended; the service then finishes its drain and exits 0.
func TestPrestopReturnsAfterWindow(t *testing.T) {
	parallelDrill(t, 0)
	admin, ex := startExample(t, "DRAINKIT_PROPAGATION_MIN=1s", "DRAINKIT_PROPAGATION_MAX=3s")
	r := drainkit(t, 30*time.Second, nil, "prestop", "--admin-addr", admin)
	if r.code != 0 {
		t.Fatalf("prestop exit %d: %s", r.code, r.stderr)
	}
	if r.took < 900*time.Millisecond || r.took > 3*time.Second {
		t.Errorf("prestop returned after %s, want about the 1s window", r.took)
	}
	if !strings.Contains(r.stdout, "propagation window ended") {
		t.Errorf("stdout %q", r.stdout)
	}
	select {
	case <-ex.exited:
	case <-time.After(15 * time.Second):
		t.Fatalf("the service did not exit after its drain:\n%s", ex.stderr.String())
	}
	if ex.code != 0 {
		t.Fatalf("service exit code %d:\n%s", ex.code, ex.stderr.String())
	}
	if n := strings.Count(ex.stderr.String(), `"to":"DRAINING"`); n != 1 {
		t.Errorf("%d DRAINING transitions, want 1", n)
	}
}

func TestPrestopUnreachable(t *testing.T) {
	parallelDrill(t, 0)
	addr := freeAddr(t)
	// A refused connect fails at once, long before --connect-timeout: judged
	// against the same binary's start and exit (a busy machine makes both
	// slow), not a fixed wall-clock bound.
	start := drainkit(t, 20*time.Second, nil, "version")
	r := drainkit(t, 30*time.Second, nil, "prestop", "--admin-addr", addr, "--connect-timeout", "10s")
	if r.code == 0 {
		t.Fatal("prestop against nothing exited 0")
	}
	if r.took > start.took+5*time.Second {
		t.Errorf("took %s (the binary's start and exit: %s), want well under --connect-timeout 10s", r.took, start.took)
	}
	if !strings.Contains(r.stderr, addr) || !strings.Contains(r.stderr, "unreachable") {
		t.Errorf("message does not name the address %s: %q", addr, r.stderr)
	}
}

// TestPrestopConnectTimeout: a listener whose accept queue is full drops
// new SYNs (Linux), so the connect hangs; prestop gives up at
// --connect-timeout and names the address. All on loopback.
func TestPrestopConnectTimeout(t *testing.T) {
	parallelDrill(t, 0)
	addr, cleanup := fullListener(t)
	defer cleanup()
	r := drainkit(t, 10*time.Second, nil, "prestop", "--admin-addr", addr, "--connect-timeout", "500ms")
	if r.code == 0 || r.took > 2*time.Second || !strings.Contains(r.stderr, addr) || !strings.Contains(r.stderr, "unreachable") {
		t.Fatalf("exit %d after %s: %q", r.code, r.took, r.stderr)
	}
	if r.took < 400*time.Millisecond {
		t.Fatalf("gave up after %s, before --connect-timeout: the listener did not hang the connect (%q)", r.took, r.stderr)
	}
}

// fullListener listens on loopback with a backlog of 0 and never accepts;
// it fills the accept queue so that further connects hang.
func fullListener(t *testing.T) (string, func()) {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	var fillers []net.Conn
	for range 4 {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			break // the queue is full
		}
		fillers = append(fillers, c)
	}
	return addr, func() {
		for _, c := range fillers {
			_ = c.Close()
		}
		_ = syscall.Close(fd)
	}
}

// TestPrestopAdminAddrFromEnv: without --admin-addr, prestop dials the port
// of DRAINKIT_ADMIN_ADDR (the service's own variable) on loopback, so that a
// manifest names the admin port once.
func TestPrestopAdminAddrFromEnv(t *testing.T) {
	parallelDrill(t, 0)
	admin, ex := startExample(t, "DRAINKIT_PROPAGATION_MIN=500ms", "DRAINKIT_PROPAGATION_MAX=3s")
	_, port, err := net.SplitHostPort(admin)
	if err != nil {
		t.Fatal(err)
	}
	r := drainkit(t, 30*time.Second, []string{"DRAINKIT_ADMIN_ADDR=0.0.0.0:" + port}, "prestop")
	if r.code != 0 || !strings.Contains(r.stdout, "127.0.0.1:"+port) {
		t.Fatalf("prestop exit %d: stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	select {
	case <-ex.exited:
	case <-time.After(15 * time.Second):
		t.Fatalf("the service did not exit after its drain:\n%s", ex.stderr.String())
	}
	// An explicit flag wins over the variable.
	addr := freeAddr(t)
	r = drainkit(t, 10*time.Second, []string{"DRAINKIT_ADMIN_ADDR=:" + port}, "prestop", "--admin-addr", addr)
	if r.code == 0 || !strings.Contains(r.stderr, addr) {
		t.Fatalf("--admin-addr %s: exit %d, stderr %q", addr, r.code, r.stderr)
	}
}

// TestServicePrestopBehavesAsCLI: the preStop hook answered by the service
// binary itself (`minimal prestop`, one binary in a distroless image) and
// `drainkit prestop` do the same against two instances of the same service
// with the same environment (the container's, as the kubelet's exec gets
// it: DRAINKIT_ADMIN_ADDR and DRAINKIT_ADMIN_TOKEN): each starts the drain
// (reason preStop), returns once the propagation window has ended and not
// before, exits 0 with the same line, and the service then completes its
// drain and exits 0. Against nothing, both exit 1 naming the address.
func TestServicePrestopBehavesAsCLI(t *testing.T) {
	parallelDrill(t, 0)
	svc := minimalBin
	type hook struct {
		name string
		run  func(env []string, args ...string) result
	}
	hooks := []hook{
		{"drainkit", func(env []string, args ...string) result {
			return drainkit(t, 30*time.Second, env, append([]string{"prestop"}, args...)...)
		}},
		{"minimal", func(env []string, args ...string) result {
			return runBinary(t, svc, 30*time.Second, env, append([]string{"prestop"}, args...)...)
		}},
	}
	// outcome is one hook's run: its exit code and line, when it returned
	// (the test's clock), and the service's own instants (its log's
	// clock, the same host's): the propagation window's end and its
	// answer to the hook's POST /drain.
	type outcome struct {
		code      int
		line      string
		returned  time.Time
		windowAt  time.Duration
		windowEnd time.Time
		answered  time.Time
	}
	var got []outcome
	for _, h := range hooks {
		env := []string{"DRAINKIT_PROPAGATION_MIN=1s", "DRAINKIT_PROPAGATION_QUIET=0s", "DRAINKIT_PROPAGATION_MAX=3s", "DRAINKIT_ADMIN_TOKEN=s3cret-token"}
		c := childtest.Start(t, svc, env)
		_, port, err := net.SplitHostPort(c.Admin)
		if err != nil {
			t.Fatal(err)
		}
		// The manifest's value: every interface, dialled on loopback.
		r := h.run(append(env, "DRAINKIT_ADMIN_ADDR=:"+port))
		returned := time.Now()
		if r.code != 0 {
			t.Fatalf("%s prestop: exit %d: %s%s", h.name, r.code, r.stdout, r.stderr)
		}
		c.Signal(syscall.SIGTERM) // the kubelet, once the hook returned
		if code := c.WaitExit(15 * time.Second); code != 0 {
			t.Fatalf("service after %s prestop: exit %d:\n%s", h.name, code, c.Logs())
		}
		if n := c.TransitionsTo("DRAINING"); n != 1 {
			t.Errorf("%s prestop: %d DRAINING transitions, want 1", h.name, n)
		}
		if !strings.Contains(c.Logs(), `"to":"DRAINING","cause":"operator","reason":"POST /drain from 127.0.0.1: preStop"`) {
			t.Errorf("%s prestop: the drain's reason is not preStop:\n%s", h.name, c.Logs())
		}
		win := c.TimelineStep("window_ended")
		if !win.OK {
			t.Fatalf("%s prestop: no window_ended step:\n%s", h.name, c.Logs())
		}
		line := strings.TrimSpace(r.stdout + r.stderr)
		line = strings.TrimPrefix(line, h.name+" ")
		start, answered := logInstant(t, c, "drainkit: drain complete", "timeline", "start"), logInstant(t, c, "drainkit: admin action", "time")
		got = append(got, outcome{r.code, regexp.MustCompile(`after \S+ `).ReplaceAllString(line, "after T "), returned, win.At, start.Add(win.At), answered})
	}
	for i, o := range got {
		// The hook returned when the window was over, not before; and the
		// service answered it promptly after the window's end. Promptness
		// is judged on the service's own instants: the hook's process
		// start and exit are the machine's, and take seconds under load.
		if o.returned.Before(o.windowEnd) {
			t.Errorf("%s prestop returned at %s, before the window ended at %s", hooks[i].name, o.returned.Format(time.StampMicro), o.windowEnd.Format(time.StampMicro))
		}
		if late := o.answered.Sub(o.windowEnd); late < 0 || late > time.Second {
			t.Errorf("%s prestop: the service answered %s after the window ended, want within 1s", hooks[i].name, late)
		}
		if o.windowAt < 900*time.Millisecond {
			t.Errorf("%s prestop: window ended at %s, before propagation.min 1s", hooks[i].name, o.windowAt)
		}
	}
	if want := regexp.MustCompile(`^prestop: propagation window ended after T \(admin listener 127\.0\.0\.1:\d+\)$`); !want.MatchString(got[0].line) ||
		regexp.MustCompile(`:\d+\)$`).ReplaceAllString(got[0].line, "") != regexp.MustCompile(`:\d+\)$`).ReplaceAllString(got[1].line, "") {
		t.Errorf("different lines:\n drainkit: %q\n minimal:  %q", got[0].line, got[1].line)
	}

	// Nothing listening: both fail the hook (exit 1), naming the address.
	addr := freeAddr(t)
	for _, h := range hooks {
		r := h.run([]string{"DRAINKIT_ADMIN_ADDR=" + addr})
		if r.code != 1 || !strings.Contains(r.stdout+r.stderr, addr) || !strings.Contains(r.stdout+r.stderr, "unreachable") {
			t.Errorf("%s prestop against nothing: exit %d, %q", h.name, r.code, r.stdout+r.stderr)
		}
	}
}

// logInstant reads an instant from the child's one log line with message
// msg: the value at path (keys of nested objects), an RFC 3339 time.
func logInstant(t *testing.T, c *childtest.Child, msg string, path ...string) time.Time {
	t.Helper()
	lines := c.LogLines(msg)
	if len(lines) != 1 {
		t.Fatalf("%d %q lines, want 1:\n%s", len(lines), msg, c.Logs())
	}
	var v any = lines[0]
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	s, _ := v.(string)
	at, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("%q line: %v at %v: %v", msg, v, path, err)
	}
	return at
}
