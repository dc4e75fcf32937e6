package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// child is the example running as a child process. Its stderr (JSON log
// lines) is collected; its addresses come from the "started" line, which the
// example logs from inside lifecycle.Run, after Run handles signals.
type child struct {
	t         *testing.T
	cmd       *exec.Cmd
	startedAt time.Time
	admin     string // host:port
	http      string // host:port
	client    *http.Client

	mu    sync.Mutex
	lines []string

	started  chan struct{}
	exited   chan struct{}
	exitAt   time.Time
	exitCode int
}

// startChild runs the example with args and the DRAINKIT_* variables of env
// (others are taken from the test's environment, without its DRAINKIT_*
// ones), and waits for its "started" line.
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
	args = append([]string{"--http-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0"}, args...)
	cmd := exec.Command(binary, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "DRAINKIT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	c := &child{t: t, cmd: cmd, client: &http.Client{Transport: tr, Timeout: 30 * time.Second},
		started: make(chan struct{}), exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c.startedAt = time.Now()
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
			t.Logf("child stderr:\n%s", c.logs())
		}
	})
	return c
}

// read collects stderr until EOF, then reaps the child.
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
	c.exitAt = time.Now()
	c.exitCode = c.cmd.ProcessState.ExitCode()
	if ws, ok := c.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		c.exitCode = -int(ws.Signal()) // killed by a signal: not a clean exit
	}
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

// transitionsTo counts "drainkit: transition" lines to state.
func (c *child) transitionsTo(state string) int {
	n := 0
	for _, m := range c.logLines("drainkit: transition") {
		if m["to"] == state {
			n++
		}
	}
	return n
}

func (c *child) signal(sig syscall.Signal) {
	c.t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		c.t.Fatalf("signal %s: %v", sig, err)
	}
}

// waitExit waits up to d for the child to exit and returns its exit code.
func (c *child) waitExit(d time.Duration) int {
	c.t.Helper()
	select {
	case <-c.exited:
		return c.exitCode
	case <-time.After(d):
		c.t.Fatalf("child still running after %s:\n%s", d, c.logs())
		return 0
	}
}

// get sends a request to the admin listener and returns status and body;
// code 0 means the request failed (e.g. the child has exited).
func (c *child) adminDo(method, path string, hdr map[string]string) (int, string) {
	req, err := http.NewRequest(method, "http://"+c.admin+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (c *child) probe(path string) int {
	code, _ := c.adminDo("GET", path, nil)
	return code
}

// state returns the "state" of GET /state ("" if unreachable).
func (c *child) state() string {
	code, body := c.adminDo("GET", "/state", nil)
	if code != http.StatusOK {
		return ""
	}
	var s struct{ State string }
	_ = json.Unmarshal([]byte(body), &s)
	return s.State
}

// waitFor polls cond every 10ms until it holds, failing after d.
func (c *child) waitFor(d time.Duration, what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("%s: not within %s", what, d)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (c *child) waitState(state string) {
	c.t.Helper()
	c.waitFor(10*time.Second, "state "+state, func() bool { return c.state() == state })
}

// getWork sends GET /work?d=... to the service listener in the background.
type result struct {
	code int
	body string
	err  error
	at   time.Time
}

func (c *child) getWork(d string) <-chan result {
	out := make(chan result, 1)
	go func() {
		resp, err := c.client.Get("http://" + c.http + "/work?d=" + d)
		if err != nil {
			out <- result{err: err, at: time.Now()}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		out <- result{code: resp.StatusCode, body: string(b), err: err, at: time.Now()}
	}()
	return out
}

// noWindow is an environment without a propagation window.
var noWindow = []string{"DRAINKIT_PROPAGATION_MIN=0s", "DRAINKIT_PROPAGATION_QUIET=0s", "DRAINKIT_PROPAGATION_MAX=0s"}
