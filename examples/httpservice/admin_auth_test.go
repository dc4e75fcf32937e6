package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
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

// GET /state and /readyz?verbose show a readiness check's error text (here a
// path standing for a DSN or a host name) only to a caller with the token
// once a token is set; without it they show the check failed, with the text
// "redacted" and a "redacted" key saying why. The token shows nowhere.
func TestStateDetailsNeedTheToken(t *testing.T) {
	const token = "state-token-7c2e-never-printed"
	secretish := filepath.Join(t.TempDir(), "db.internal.example:5432")
	c := startChild(t, append([]string{"DRAINKIT_ADMIN_TOKEN=" + token, "DRAINKIT_CHECKS_INTERVAL=100ms", "DRAINKIT_CHECKS_TIMEOUT=50ms"}, noWindow...),
		"--fail-readiness-file", secretish)
	c.WaitState("READY")
	if err := os.WriteFile(secretish, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	auth := map[string]string{"Authorization": "Bearer " + token}
	var withToken string
	c.WaitFor(5*time.Second, "the check's error in GET /state with the token", func() bool {
		_, withToken = c.AdminDo("GET", "/state", auth)
		return strings.Contains(withToken, "db.internal.example")
	})
	for _, tc := range []struct {
		name string
		hdr  map[string]string
	}{{"no token", nil}, {"wrong token", map[string]string{"Authorization": "Bearer wrong"}}} {
		code, body := c.AdminDo("GET", "/state", tc.hdr)
		if code != http.StatusOK || strings.Contains(body, "db.internal.example") {
			t.Errorf("%s: GET /state = %d, shows the check's error text:\n%s", tc.name, code, body)
		}
		var doc struct {
			Checks []struct {
				Name string `json:"name"`
				OK   bool   `json:"ok"`
				Err  string `json:"error"`
			} `json:"checks"`
			Redacted string `json:"redacted"`
		}
		if err := json.Unmarshal([]byte(body), &doc); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, body)
		}
		if len(doc.Checks) != 1 || doc.Checks[0].OK || doc.Checks[0].Err != "redacted" || !strings.Contains(doc.Redacted, "token") {
			t.Errorf("%s: checks %+v, redacted %q: want the failed check, its text redacted, and why", tc.name, doc.Checks, doc.Redacted)
		}
		if _, body := c.AdminDo("GET", "/readyz?verbose", tc.hdr); strings.Contains(body, "db.internal.example") || !strings.Contains(body, "redacted") {
			t.Errorf("%s: GET /readyz?verbose shows the check's error text:\n%s", tc.name, body)
		}
	}
	if _, body := c.AdminDo("GET", "/readyz?verbose", auth); !strings.Contains(body, "db.internal.example") {
		t.Errorf("GET /readyz?verbose with the token lacks the check's error:\n%s", body)
	}
	c.Signal(syscall.SIGTERM)
	c.WaitExit(10 * time.Second)
	if strings.Contains(c.Logs(), token) || strings.Contains(withToken, token) {
		t.Errorf("the token leaked into the logs or GET /state")
	}
}
