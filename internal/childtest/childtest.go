// Package childtest runs a drainkit service binary, such as
// examples/httpservice, as a real child process for tests: it builds the
// binary, starts it on loopback with ":0" ports, reads the JSON log lines on
// its stderr, learns the bound addresses from the service's "started" line
// (msg "started" with "admin" and "http" members), sends it real signals and
// reaps it.
package childtest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Build compiles the main package pkg (an import path) into a new temporary
// directory and returns the binary's path and a function that removes it.
func Build(pkg string) (bin string, remove func(), err error) {
	dir, err := os.MkdirTemp("", "drainkit-child-")
	if err != nil {
		return "", nil, err
	}
	remove = func() { _ = os.RemoveAll(dir) }
	bin = filepath.Join(dir, path.Base(pkg))
	// The go command that runs the test: on PATH, else under $GOROOT, which
	// the go command sets for the test binaries it runs.
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	if out, err := exec.Command(goBin, "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		remove()
		return "", nil, fmt.Errorf("building %s: %v\n%s", pkg, err, out)
	}
	return bin, remove, nil
}

// Child is one running service process.
type Child struct {
	Cmd *exec.Cmd
	// Admin and HTTP are the bound host:port of the admin and service
	// listeners, known once Start returns.
	Admin, HTTP string
	// Client sends requests to the child: no keep-alive, 30 s timeout.
	Client    *http.Client
	StartedAt time.Time

	t        *testing.T
	mu       sync.Mutex
	lines    []string
	started  chan struct{}
	exited   chan struct{}
	exitAt   time.Time
	exitCode int
}

// Start runs bin with --http-addr and --admin-addr 127.0.0.1:0 (args may
// override them: the last flag wins) and env added to the test's environment,
// from which every DRAINKIT_* and CONSUL_* variable is removed. It waits up to
// 15 s for the "started" line and fails the test if the child exits first.
// The child is killed, if still running, when the test ends.
func Start(t *testing.T, bin string, env []string, args ...string) *Child {
	t.Helper()
	return awaitStart(t, StartNoWait(t, bin, env, args...))
}

// StartWorker is Start for a program with no HTTP listener (only workers,
// which would refuse --http-addr): it adds --admin-addr 127.0.0.1:0 only,
// and HTTP stays empty.
func StartWorker(t *testing.T, bin string, env []string, args ...string) *Child {
	t.Helper()
	return awaitStart(t, start(t, bin, env, append([]string{"--admin-addr", "127.0.0.1:0"}, args...)...))
}

// awaitStart waits up to 15 s for c's "started" line and fails the test if
// the child exits first.
func awaitStart(t *testing.T, c *Child) *Child {
	t.Helper()
	select {
	case <-c.started:
	case <-c.exited:
		t.Fatalf("child exited with %d before starting:\n%s", c.exitCode, c.Logs())
	case <-time.After(15 * time.Second):
		t.Fatalf("child did not start within 15s:\n%s", c.Logs())
	}
	return c
}

// StartNoWait is Start without waiting for the "started" line.
func StartNoWait(t *testing.T, bin string, env []string, args ...string) *Child {
	t.Helper()
	return start(t, bin, env, append([]string{"--http-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0"}, args...)...)
}

// start runs bin with args, as StartNoWait says.
func start(t *testing.T, bin string, env []string, args ...string) *Child {
	t.Helper()
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
	c := &Child{t: t, Cmd: cmd, Client: &http.Client{Transport: tr, Timeout: 30 * time.Second},
		started: make(chan struct{}), exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.StartedAt = time.Now()
	go c.read(stderr)
	t.Cleanup(func() {
		select {
		case <-c.exited:
		default:
			_ = cmd.Process.Kill()
			<-c.exited
		}
		tr.CloseIdleConnections()
		if t.Failed() {
			t.Logf("child %d stderr:\n%s", cmd.Process.Pid, c.Logs())
		}
	})
	return c
}

// read collects stderr until EOF, then reaps the child.
func (c *Child) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		c.mu.Lock()
		c.lines = append(c.lines, line)
		c.mu.Unlock()
		var m struct{ Msg, Admin, HTTP string }
		if json.Unmarshal([]byte(line), &m) == nil && m.Msg == "started" && c.Admin == "" {
			c.Admin, c.HTTP = m.Admin, m.HTTP
			close(c.started)
		}
	}
	_, _ = io.Copy(io.Discard, r)
	_ = c.Cmd.Wait()
	c.exitAt = time.Now()
	c.exitCode = c.Cmd.ProcessState.ExitCode()
	if ws, ok := c.Cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		c.exitCode = -int(ws.Signal()) // killed by a signal: not a clean exit
	}
	close(c.exited)
}

// Exited is closed once the child has exited and been reaped; ExitCode and
// ExitAt are valid from then on.
func (c *Child) Exited() <-chan struct{} { return c.exited }

// ExitCode is the exit code, or minus the signal number when a signal killed
// the child. Valid once Exited is closed.
func (c *Child) ExitCode() int { return c.exitCode }

// ExitAt is when the child was reaped. Valid once Exited is closed.
func (c *Child) ExitAt() time.Time { return c.exitAt }

// Logs returns stderr so far.
func (c *Child) Logs() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.lines, "\n")
}

// LogLines returns the decoded JSON log lines whose msg is msg.
func (c *Child) LogLines(msg string) []map[string]any {
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

// TransitionsTo counts the lifecycle's "drainkit: transition" lines to state.
func (c *Child) TransitionsTo(state string) int {
	n := 0
	for _, m := range c.LogLines("drainkit: transition") {
		if m["to"] == state {
			n++
		}
	}
	return n
}

// Signal sends sig to the child.
func (c *Child) Signal(sig syscall.Signal) {
	c.t.Helper()
	if err := c.Cmd.Process.Signal(sig); err != nil {
		c.t.Fatalf("signal %s: %v", sig, err)
	}
}

// WaitExit waits up to d for the child to exit and returns ExitCode.
func (c *Child) WaitExit(d time.Duration) int {
	c.t.Helper()
	select {
	case <-c.exited:
		return c.exitCode
	case <-time.After(d):
		c.t.Fatalf("child still running after %s:\n%s", d, c.Logs())
		return 0
	}
}

// AdminDo sends a request to the admin listener and returns status and body;
// status 0 means the request failed (e.g. the child has exited), with the
// error as body.
func (c *Child) AdminDo(method, path string, hdr map[string]string) (int, string) {
	req, err := http.NewRequest(method, "http://"+c.Admin+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Probe returns the status of GET path on the admin listener (0 if the
// request failed).
func (c *Child) Probe(path string) int {
	code, _ := c.AdminDo("GET", path, nil)
	return code
}

// State returns the "state" of GET /state ("" if unreachable).
func (c *Child) State() string {
	code, body := c.AdminDo("GET", "/state", nil)
	if code != http.StatusOK {
		return ""
	}
	var s struct{ State string }
	_ = json.Unmarshal([]byte(body), &s)
	return s.State
}

// WaitFor polls cond every 10 ms until it holds, failing the test after d.
func (c *Child) WaitFor(d time.Duration, what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(10 * time.Millisecond) // poll with a deadline
	}
}

// WaitState waits up to 10 s for GET /state to report state.
func (c *Child) WaitState(state string) {
	c.t.Helper()
	c.WaitFor(10*time.Second, "state "+state, func() bool { return c.State() == state })
}

// Step is one drain step of the timeline in the child's exit log line.
type Step struct {
	At  time.Duration
	OK  bool // the step was recorded
	Err string
}

// TimelineStep reads the step name from the timeline of the child's one
// "drainkit: drain complete" line: "<name>_ms", the offset in whole
// milliseconds, and "<name>_error" when the step failed.
func (c *Child) TimelineStep(name string) Step {
	c.t.Helper()
	lines := c.LogLines("drainkit: drain complete")
	if len(lines) != 1 {
		c.t.Fatalf("%d drain complete lines", len(lines))
	}
	tl, _ := lines[0]["timeline"].(map[string]any)
	ms, ok := tl[name+"_ms"].(float64)
	if !ok {
		return Step{}
	}
	e, _ := tl[name+"_error"].(string)
	return Step{At: time.Duration(ms) * time.Millisecond, OK: true, Err: e}
}
