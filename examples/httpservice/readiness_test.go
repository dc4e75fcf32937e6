package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A readiness check failing 3 times ejects (readyz 503, livez 200); 5
// successes restore READY. The check is the example's --fail-readiness-file,
// flipped from here; rounds run every 100ms.
func TestReadinessCheckHysteresis(t *testing.T) {
	const interval = 100 * time.Millisecond
	flag := filepath.Join(t.TempDir(), "unhealthy")
	c := startChild(t, append([]string{"DRAINKIT_CHECKS_INTERVAL=100ms", "DRAINKIT_CHECKS_TIMEOUT=50ms"}, noWindow...),
		"--fail-readiness-file", flag)
	c.WaitState("READY")

	if err := os.WriteFile(flag, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	failing := time.Now()
	c.WaitFor(5*time.Second, "readyz 503 after the check fails", func() bool { return c.Probe("/readyz") == http.StatusServiceUnavailable })
	ejectedAfter := time.Since(failing)
	if took := ejectedAfter; took < 2*interval-30*time.Millisecond {
		t.Errorf("ejected %s after the check started failing: fewer than 3 rounds", took)
	}
	st := status(t, c)
	if st.State != "EJECTED" || st.Cause != "checks" || st.Reason != "readiness checks failed 3 times in a row" {
		t.Errorf("status %+v, want EJECTED by 3 failed check rounds", st)
	}
	if c.Probe("/livez") != http.StatusOK || c.Probe("/startupz") != http.StatusOK {
		t.Errorf("livez/startupz not 200 while ejected by a check")
	}

	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	passing := time.Now()
	// Poll every 20ms: readyz stays 503 until the 5th success.
	c.WaitFor(5*time.Second, "readyz 200 after the check passes", func() bool { return c.Probe("/readyz") == http.StatusOK })
	restoredAfter := time.Since(passing)
	t.Logf("ejected %s after the check began failing, restored %s after it began passing (interval %s)",
		ejectedAfter.Round(time.Millisecond), restoredAfter.Round(time.Millisecond), interval)
	if took := restoredAfter; took < 4*interval-30*time.Millisecond {
		t.Errorf("restored %s after the check started passing: fewer than 5 rounds", took)
	}
	st = status(t, c)
	if st.State != "READY" || st.Cause != "checks" || st.Reason != "readiness checks passed 5 times in a row" {
		t.Errorf("status %+v, want READY after 5 passed rounds", st)
	}

	c.Signal(syscall.SIGTERM)
	if code := c.WaitExit(10 * time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	// Counted once the child has exited: the transition's log line is
	// written after /readyz already answers from the new state, and it
	// reaches this test through a pipe and a reader goroutine that may lag;
	// after the exit every line has been read. (The drain adds no EJECTED.)
	if n := c.TransitionsTo("EJECTED"); n != 1 {
		t.Errorf("%d transitions to EJECTED, want 1", n)
	}
}

type statusView struct {
	State, Cause, Reason string
}

func status(t *testing.T, c *child) statusView {
	t.Helper()
	code, body := c.AdminDo("GET", "/state", nil)
	var s statusView
	if code != http.StatusOK || json.Unmarshal([]byte(body), &s) != nil {
		t.Fatalf("GET /state = %d %q", code, body)
	}
	return s
}
