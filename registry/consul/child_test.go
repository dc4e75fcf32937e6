package consul

// Acceptance tests of issue 6 that run examples/httpservice as a real child
// process registered in a real dev agent, and send it real signals.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/consultest"
	"github.com/hashicorp/consul/api"
)

var (
	exampleOnce sync.Once
	exampleDir  string
	exampleBin  string
	exampleErr  error
)

// exampleBinary builds examples/httpservice once per test run.
func exampleBinary(t *testing.T) string {
	t.Helper()
	exampleOnce.Do(func() {
		exampleDir, exampleErr = os.MkdirTemp("", "drainkit-consul-test-")
		if exampleErr != nil {
			return
		}
		exampleBin = filepath.Join(exampleDir, "httpservice")
		goBin, err := exec.LookPath("go")
		if err != nil {
			goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		out, err := exec.Command(goBin, "build", "-o", exampleBin, "github.com/drainkit/drainkit/examples/httpservice").CombinedOutput()
		if err != nil {
			exampleErr = fmt.Errorf("building examples/httpservice: %v\n%s", err, out)
		}
	})
	if exampleErr != nil {
		t.Fatal(exampleErr)
	}
	return exampleBin
}

func removeExampleBuild() {
	if exampleDir != "" {
		_ = os.RemoveAll(exampleDir)
	}
}

// childTimings are the DRAINKIT_* settings of the child tests: window
// 2s..4s, TTL 3s with a heartbeat every 1s, fast readiness checks.
var childTimings = []string{
	"DRAINKIT_PROPAGATION_MIN=2s", "DRAINKIT_PROPAGATION_QUIET=0s", "DRAINKIT_PROPAGATION_MAX=4s",
	"DRAINKIT_DRAIN_TIMEOUT=2s", "DRAINKIT_STOP_TIMEOUT=1s", "DRAINKIT_GRACE_PERIOD=10s",
	"DRAINKIT_REGISTRY_TTL=3s", "DRAINKIT_REGISTRY_HEARTBEAT_INTERVAL=1s",
	"DRAINKIT_CHECKS_INTERVAL=200ms", "DRAINKIT_CHECKS_TIMEOUT=100ms",
	"DRAINKIT_CHECKS_FAILURE_THRESHOLD=1", "DRAINKIT_CHECKS_SUCCESS_THRESHOLD=2",
}

const (
	childPropagationMin = 2 * time.Second
	childPropagationMax = 4 * time.Second
	childBudget         = 4*time.Second + 2*time.Second + time.Second + time.Second // max + drain + stop + margin
)

// child is examples/httpservice running as a child process.
type child struct {
	t      *testing.T
	cmd    *exec.Cmd
	admin  string
	http   string
	client *http.Client

	mu       sync.Mutex
	lines    []string
	started  chan struct{}
	exited   chan struct{}
	exitCode int
}

// startChild runs the example with env added to the test's environment
// (without its DRAINKIT_* and CONSUL_* variables) and waits for its
// "started" line.
func startChild(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	c := startChildNoWait(t, env, args...)
	select {
	case <-c.started:
	case <-c.exited:
		t.Fatalf("child exited with %d before starting:\n%s", c.exitCode, c.logs())
	case <-time.After(15 * time.Second):
		t.Fatalf("child did not start within 15s:\n%s", c.logs())
	}
	return c
}

func startChildNoWait(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	bin := exampleBinary(t)
	if !hasFlag(args, "--http-addr") {
		args = append(args, "--http-addr", "127.0.0.1:0")
	}
	args = append(args, "--admin-addr", "127.0.0.1:0")
	cmd := exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DRAINKIT_") && !strings.HasPrefix(kv, "CONSUL_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{DisableKeepAlives: true}
	c := &child{t: t, cmd: cmd, client: &http.Client{Transport: tr, Timeout: 5 * time.Second},
		started: make(chan struct{}), exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go c.read(stderr)
	t.Cleanup(func() {
		select {
		case <-c.exited:
		default:
			_ = cmd.Process.Kill()
			<-c.exited
		}
		if t.Failed() {
			t.Logf("child %d stderr:\n%s", cmd.Process.Pid, c.logs())
		}
	})
	return c
}

func hasFlag(args []string, f string) bool {
	for _, a := range args {
		if a == f {
			return true
		}
	}
	return false
}

func (c *child) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		c.mu.Lock()
		c.lines = append(c.lines, line)
		c.mu.Unlock()
		var m struct{ Msg, Admin, HTTP string }
		if json.Unmarshal([]byte(line), &m) == nil && m.Msg == "started" && c.admin == "" {
			c.admin, c.http = m.Admin, m.HTTP
			close(c.started)
		}
	}
	_, _ = io.Copy(io.Discard, r)
	_ = c.cmd.Wait()
	c.exitCode = c.cmd.ProcessState.ExitCode()
	close(c.exited)
}

func (c *child) logs() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.lines, "\n")
}

// logLines returns the decoded JSON log lines whose msg is msg.
func (c *child) logLines(msg string) []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []map[string]any
	for _, l := range c.lines {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

func (c *child) waitExit(d time.Duration) int {
	c.t.Helper()
	select {
	case <-c.exited:
		return c.exitCode
	case <-time.After(d):
		c.t.Fatalf("child still running after %s", d)
		return 0
	}
}

// probe returns the status of GET path on the admin listener (0 if the
// request failed).
func (c *child) probe(path string) int {
	resp, err := c.client.Get("http://" + c.admin + path)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// step is one drain step read from the child's "drain complete" log line.
type step struct {
	at  time.Duration
	ok  bool
	err string
}

// timelineStep reads step name of the timeline in the child's exit log line.
// slog's JSON handler writes durations as nanoseconds; a failed step is a
// group {"at": ns, "error": "..."}.
func (c *child) timelineStep(name string) step {
	lines := c.logLines("drainkit: drain complete")
	if len(lines) != 1 {
		c.t.Fatalf("%d drain complete lines", len(lines))
	}
	tl, _ := lines[0]["timeline"].(map[string]any)
	switch v := tl[name].(type) {
	case float64:
		return step{at: time.Duration(v), ok: true}
	case map[string]any:
		at, _ := v["at"].(float64)
		e, _ := v["error"].(string)
		return step{at: time.Duration(at), ok: true, err: e}
	}
	return step{}
}

// childEnv is the environment of a child registering in a.
func childEnv(a *consultest.Agent, extra ...string) []string {
	return append(append(append([]string{}, a.Env()...), childTimings...), extra...)
}

// onlyInstance waits until exactly one instance of service passes and
// returns its ID.
func onlyInstance(t *testing.T, c *api.Client, service string, timeout time.Duration) string {
	t.Helper()
	var id string
	eventually(t, timeout, "one passing instance of "+service, func() (bool, string) {
		ids, err := passingIDs(c, service)
		if len(ids) == 1 {
			id = ids[0]
		}
		return len(ids) == 1, fmt.Sprint(ids, err)
	})
	return id
}

// TestChildWarmupAbsentUntilReady: a 1s warm-up; whenever the catalog lists
// the instance (in any state), /readyz already answers 200; then it passes.
func TestChildWarmupAbsentUntilReady(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	const svc = "warmup-svc"
	start := time.Now()
	ch := startChild(t, childEnv(a), "--warmup", "1s", "--service", svc)
	var firstReady, firstPassing time.Time
	saw503 := false
	eventually(t, 10*time.Second, "passing after warm-up", func() (bool, string) {
		entries, _, err := c.Health().Service(svc, "", false, nil) // any state
		if err != nil {
			return false, err.Error()
		}
		code := ch.probe("/readyz") // after the catalog: if listed, READY came first
		now := time.Now()
		if code == http.StatusServiceUnavailable {
			saw503 = true
		}
		if code == http.StatusOK && firstReady.IsZero() {
			firstReady = now
		}
		if len(entries) > 0 && code != http.StatusOK {
			t.Fatalf("listed in the catalog %s after start while /readyz answers %d", now.Sub(start), code)
		}
		if len(entries) == 1 && entries[0].Checks.AggregatedStatus() == api.HealthPassing {
			firstPassing = now
			return true, ""
		}
		return false, fmt.Sprintf("%d entries, readyz %d", len(entries), code)
	})
	if !saw503 {
		t.Fatal("/readyz never answered 503: the warm-up was not observed")
	}
	t.Logf("readyz 200 at %s, passing at %s after the child started (warm-up 1s)",
		firstReady.Sub(start).Round(time.Millisecond), firstPassing.Sub(start).Round(time.Millisecond))
	if firstPassing.Sub(start) < time.Second {
		t.Fatalf("passing %s after start, before the 1s warm-up ended", firstPassing.Sub(start))
	}
	ch.cmd.Process.Signal(syscall.SIGTERM)
	if code := ch.waitExit(15 * time.Second); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// TestChildSIGTERM: on SIGTERM the instance leaves health/service?passing
// before the propagation window ends, a watch sees it go, and the timeline
// records the deregistered and confirmed offsets.
func TestChildSIGTERM(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	const svc = "sigterm-svc"
	ch := startChild(t, childEnv(a), "--service", svc)
	id := onlyInstance(t, c, svc, 10*time.Second)

	w := NewWatcher(c, svc, WatchOptions{WaitTime: 5 * time.Second})
	defer w.Close()
	ctx := t.Context()
	if _, err := w.WaitFor(ctx, func(v View) bool { return v.Has(id) }); err != nil {
		t.Fatal(err)
	}
	watchGone := make(chan time.Time, 1)
	go func() {
		if _, err := w.WaitFor(ctx, func(v View) bool { return v.Err == nil && !v.Has(id) }); err == nil {
			watchGone <- time.Now()
		}
	}()

	sig := time.Now()
	ch.cmd.Process.Signal(syscall.SIGTERM)
	gone := eventually(t, childPropagationMin, "gone from health/service?passing before the window ends", func() (bool, string) {
		ids, err := passingIDs(c, svc)
		return err == nil && !hasID(ids, id), fmt.Sprint(ids, err)
	})
	var watched time.Duration
	select {
	case at := <-watchGone:
		watched = at.Sub(sig)
	case <-time.After(childPropagationMin):
		t.Fatal("the watch did not see the removal within propagation.min")
	}
	if code := ch.waitExit(childBudget + 2*time.Second); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	dereg, conf, win := ch.timelineStep("deregistered"), ch.timelineStep("confirmed"), ch.timelineStep("window_ended")
	if !dereg.ok || !conf.ok || !win.ok || dereg.err != "" || conf.err != "" {
		t.Fatalf("timeline: deregistered %+v confirmed %+v window_ended %+v", dereg, conf, win)
	}
	t.Logf("after SIGTERM: deregistered at %s, confirmed at %s (timeline); gone from ?passing by %s and from the watch by %s (observed); window ended at %s",
		dereg.at, conf.at, gone.Round(time.Millisecond), watched.Round(time.Millisecond), win.at)
	if conf.at > win.at || gone > win.at || watched > win.at {
		t.Fatal("the instance was still passing when the window ended")
	}
	if win.at < childPropagationMin {
		t.Fatalf("window ended at %s, before propagation.min", win.at)
	}
}

// TestChildAgentStoppedBeforeSIGTERM: with the agent gone, the drain still
// completes within its budget and logs the deregistration failure.
func TestChildAgentStoppedBeforeSIGTERM(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	const svc = "agent-down-svc"
	ch := startChild(t, childEnv(a), "--service", svc)
	onlyInstance(t, c, svc, 10*time.Second)
	a.Stop()
	sig := time.Now()
	ch.cmd.Process.Signal(syscall.SIGTERM)
	code := ch.waitExit(childBudget + 5*time.Second)
	took := time.Since(sig)
	if code != 0 {
		t.Fatalf("exit code %d", code)
	}
	dereg := ch.timelineStep("deregistered")
	t.Logf("drain with the agent down: exit after %s (budget %s); deregistration gave up at %s: %s", took.Round(time.Millisecond), childBudget, dereg.at, dereg.err)
	if took > childBudget {
		t.Fatalf("exit after %s, over the budget %s", took, childBudget)
	}
	if !dereg.ok || dereg.err == "" || dereg.at > childPropagationMax+time.Second {
		t.Fatalf("deregistered step %+v; want a failure within propagation.max", dereg)
	}
	if len(ch.logLines("consul: deregistration failed; the check turns critical after the TTL")) != 1 {
		t.Fatal("the registrar did not log the deregistration failure")
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestChildKill9: a killed child's check turns critical within the TTL; a new
// process on the same address and port replaces it, never with two passing
// entries, and removes the dead registration.
func TestChildKill9(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	const svc = "kill9-svc"
	addr := "127.0.0.1:" + strconv.Itoa(freePort(t))
	first := startChild(t, childEnv(a), "--service", svc, "--http-addr", addr)
	oldID := onlyInstance(t, c, svc, 10*time.Second)

	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	first.waitExit(5 * time.Second)
	critical := eventually(t, testTTL+time.Second, "check critical after kill -9", func() (bool, string) {
		s := checkStatus(c, "service:"+oldID)
		return s == api.HealthCritical, s
	})
	t.Logf("check critical %s after kill -9 (TTL %s)", critical.Round(time.Millisecond), testTTL)
	if critical > testTTL+500*time.Millisecond {
		t.Errorf("critical after %s, later than the TTL %s (+500ms scheduling slack)", critical, testTTL)
	}

	second := startChild(t, childEnv(a), "--service", svc, "--http-addr", addr)
	var newID string
	eventually(t, 10*time.Second, "the successor passing", func() (bool, string) {
		ids, err := passingIDs(c, svc)
		if len(ids) > 1 {
			t.Fatalf("duplicate passing entries: %v", ids)
		}
		if len(ids) == 1 && ids[0] != oldID {
			newID = ids[0]
			return true, ""
		}
		return false, fmt.Sprint(ids, err)
	})
	svcs, err := c.Agent().Services()
	if err != nil {
		t.Fatal(err)
	}
	if svcs[oldID] != nil || svcs[newID] == nil || len(svcs) != 1 {
		t.Fatalf("after the successor registered: %v; want only %s", svcs, newID)
	}
	if len(second.logLines("consul: removed a dead predecessor's registration on this address and port")) != 1 {
		t.Fatal("the successor did not log the removal of its predecessor")
	}
}

// TestChildReadinessEject: a failing readiness check ejects the instance and
// its check turns critical; recovery turns it passing again.
func TestChildReadinessEject(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	const svc = "eject-svc"
	flag := filepath.Join(t.TempDir(), "fail")
	startChild(t, childEnv(a), "--service", svc, "--fail-readiness-file", flag)
	id := onlyInstance(t, c, svc, 10*time.Second)
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	took := eventually(t, 5*time.Second, "critical after the readiness check failed", func() (bool, string) {
		ids, _ := passingIDs(c, svc)
		s := checkStatus(c, "service:"+id)
		return s == api.HealthCritical && !hasID(ids, id), s
	})
	t.Logf("critical %s after the readiness check started failing", took.Round(time.Millisecond))
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	took = eventually(t, 5*time.Second, "passing after recovery", func() (bool, string) {
		ids, err := passingIDs(c, svc)
		return hasID(ids, id), fmt.Sprint(ids, err)
	})
	t.Logf("passing again %s after the readiness check recovered", took.Round(time.Millisecond))
}

// TestChildInvalidSettings: out-of-range registry settings fail at start
// (exit 2, nothing started) with a message naming the key.
func TestChildInvalidSettings(t *testing.T) {
	for _, c := range []struct{ env, key string }{
		{"DRAINKIT_REGISTRY_DEREGISTER_CRITICAL_SERVICE_AFTER=30s", "registry.deregister_critical_service_after"},
		{"DRAINKIT_REGISTRY_TTL=0s", "registry.ttl"},
		{"DRAINKIT_REGISTRY_HEARTBEAT_INTERVAL=1500ms", "registry.heartbeat_interval"}, // TTL 3s: > TTL/3
	} {
		t.Run(c.key, func(t *testing.T) {
			// No agent is needed: the settings fail before any call.
			env := append(append([]string{"CONSUL_HTTP_ADDR=127.0.0.1:1"}, childTimings...), c.env)
			ch := startChildNoWait(t, env, "--service", "invalid")
			if code := ch.waitExit(10 * time.Second); code != 2 {
				t.Fatalf("exit code %d, want 2:\n%s", code, ch.logs())
			}
			if out := ch.logs(); !strings.Contains(out, c.key) {
				t.Fatalf("message does not name %s:\n%s", c.key, out)
			}
			t.Logf("%s -> %s", c.env, strings.TrimSpace(ch.logs()))
		})
	}
}
