package main

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// With a token configured (DRAINKIT_ADMIN_TOKEN), a loopback caller without
// it is refused too; with it, POST /drain is accepted. The token never shows
// in the logs or in GET /state. (A non-loopback peer cannot be produced on
// this loopback-only machine: probes tests it at the handler level.)
func TestAdminTokenRequiredFromLoopback(t *testing.T) {
	const token = "example-token-4b1d-never-printed"
	c := startChild(t, append([]string{"DRAINKIT_ADMIN_TOKEN=" + token}, noWindow...))
	c.WaitState("READY")

	if code, body := c.AdminDo("POST", "/drain", nil); code != http.StatusForbidden {
		t.Errorf("POST /drain without token = %d %q, want 403", code, body)
	}
	if code, _ := c.AdminDo("POST", "/eject", map[string]string{"Authorization": "Bearer wrong"}); code != http.StatusForbidden {
		t.Errorf("POST /eject with a wrong token = %d, want 403", code)
	}
	if st := c.State(); st != "READY" {
		t.Fatalf("state %s after refused calls, want READY", st)
	}
	_, state := c.AdminDo("GET", "/state", nil)
	if code, body := c.AdminDo("POST", "/drain", map[string]string{"Authorization": "Bearer " + token}); code != http.StatusAccepted {
		t.Fatalf("POST /drain with the token = %d %q, want 202", code, body)
	}
	if code := c.WaitExit(10 * time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if strings.Contains(c.Logs(), token) || strings.Contains(state, token) {
		t.Errorf("the token leaked into the logs or GET /state")
	}
	if len(c.LogLines("drainkit: admin action refused")) != 2 {
		t.Errorf("want 2 refusal lines:\n%s", c.Logs())
	}
}

// Without a token the loopback caller is accepted; the flag --admin-token
// works like the variable.
func TestAdminTokenFlag(t *testing.T) {
	c := startChild(t, noWindow, "--admin-token", "flag-token")
	c.WaitState("READY")
	if code, _ := c.AdminDo("POST", "/eject", nil); code != http.StatusForbidden {
		t.Errorf("POST /eject without the flag's token = %d, want 403", code)
	}
	if code, _ := c.AdminDo("POST", "/eject", map[string]string{"Authorization": "Bearer flag-token"}); code != http.StatusOK {
		t.Errorf("POST /eject with the flag's token = %d, want 200", code)
	}
	if st := c.State(); st != "EJECTED" {
		t.Errorf("state %s, want EJECTED", st)
	}
	c.Signal(syscall.SIGTERM)
	if code := c.WaitExit(10 * time.Second); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}
