package probes_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/probes"
)

// serveFrom runs one request through the handler with a chosen peer address,
// as a non-loopback peer cannot be produced on a loopback-only machine.
func serveFrom(h http.Handler, remoteAddr, method, target string, hdr map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	req.RemoteAddr = remoteAddr
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestNonLoopbackPeerRefusedWithoutToken(t *testing.T) {
	hs := newHarness(t, probes.Options{}, lifecycle.Options{})
	hs.run(t)
	for _, peer := range []string{"203.0.113.7:40000", "[2001:db8::1]:40000", "10.0.0.1:1"} {
		for _, path := range []string{"/drain", "/eject", "/restore"} {
			rec := serveFrom(hs.h, peer, "POST", path, nil)
			if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "only loopback peers") {
				t.Errorf("POST %s from %s = %d %q, want 403", path, peer, rec.Code, rec.Body)
			}
		}
		// Even a bearer header does not help when no token is configured.
		rec := serveFrom(hs.h, peer, "POST", "/drain", map[string]string{"Authorization": "Bearer anything"})
		if rec.Code != http.StatusForbidden {
			t.Errorf("POST /drain from %s with a bearer header = %d, want 403", peer, rec.Code)
		}
	}
	if st := hs.lc.State(); st != lifecycle.Ready {
		t.Fatalf("refused calls changed the state to %s", st)
	}
	// Probes stay open to every peer (the kubelet is not on loopback).
	if rec := serveFrom(hs.h, "203.0.113.7:40000", "GET", "/readyz", nil); rec.Code != http.StatusOK {
		t.Errorf("GET /readyz from a remote peer = %d, want 200", rec.Code)
	}
	// The same call from a real loopback socket is accepted.
	if code := hs.code(t, "POST", "/drain"); code != http.StatusAccepted {
		t.Errorf("POST /drain from 127.0.0.1 = %d, want 202", code)
	}
}

func TestTokenRequiredFromEveryone(t *testing.T) {
	const token = "tok-9f8e7d6c5b4a-never-logged"
	logs := &testlog.Buffer{}
	hs := newHarness(t, probes.Options{Token: token, Logger: slog.New(slog.NewJSONHandler(logs, nil))}, lifecycle.Options{})
	hs.run(t)
	remote := "203.0.113.7:40000"

	// Remote peer: missing token 403 with a challenge, wrong token 403.
	rec := serveFrom(hs.h, remote, "POST", "/drain", nil)
	if rec.Code != http.StatusForbidden || rec.Header().Get("WWW-Authenticate") == "" {
		t.Errorf("remote POST /drain without token = %d (WWW-Authenticate %q), want 403 with a challenge",
			rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
	for _, auth := range []string{"Bearer wrong", "Bearer " + token + "x", "Basic " + token, token, "Bearer"} {
		rec := serveFrom(hs.h, remote, "POST", "/drain", map[string]string{"Authorization": auth})
		if rec.Code != http.StatusForbidden {
			t.Errorf("remote POST /drain with Authorization %q = %d, want 403", auth, rec.Code)
		}
		if strings.Contains(rec.Body.String(), token) {
			t.Errorf("the answer echoes the credential: %q", rec.Body)
		}
	}
	if rec := serveFrom(hs.h, remote, "POST", "/eject", map[string]string{"Authorization": "Bearer wrong"}); rec.Code != http.StatusForbidden {
		t.Errorf("wrong token = %d, want 403", rec.Code)
	}

	// Loopback over a real socket: refused without the token too.
	if code, _, body := hs.do(t, "POST", "/eject", nil); code != http.StatusForbidden || !strings.Contains(body, "bearer token is required") {
		t.Errorf("loopback POST /eject without token = %d %q, want 403", code, body)
	}
	if code := hs.code(t, "POST", "/drain"); code != http.StatusForbidden {
		t.Errorf("loopback POST /drain without token = %d, want 403", code)
	}
	if st := hs.lc.State(); st != lifecycle.Ready {
		t.Fatalf("refused calls changed the state to %s", st)
	}

	// With the token: accepted from the remote peer (scheme case-insensitive)
	// and from loopback.
	if rec := serveFrom(hs.h, remote, "POST", "/eject", map[string]string{"Authorization": "bearer " + token}); rec.Code != http.StatusOK {
		t.Errorf("remote POST /eject with token = %d %q, want 200", rec.Code, rec.Body)
	}
	if code, _, _ := hs.do(t, "POST", "/drain", map[string]string{"Authorization": "Bearer " + token}); code != http.StatusAccepted {
		t.Errorf("loopback POST /drain with token = %d, want 202", code)
	}
	if st := hs.lc.State(); st != lifecycle.Draining {
		t.Errorf("state %s, want DRAINING", st)
	}

	out := logs.String()
	if strings.Contains(out, token) {
		t.Errorf("logs contain the token:\n%s", out)
	}
	if !strings.Contains(out, "admin action refused") || !strings.Contains(out, `"peer":"203.0.113.7"`) {
		t.Errorf("refusals not logged with the peer:\n%s", out)
	}
}

func TestLoopbackRuleResistsBrowsers(t *testing.T) {
	hs := newHarness(t, probes.Options{}, lifecycle.Options{})
	hs.run(t)
	// DNS rebinding: a page served as evil.example, rebound to 127.0.0.1.
	code, _, body := hs.do(t, "POST", "/drain", map[string]string{"Host": "evil.example:8081"})
	if code != http.StatusForbidden || !strings.Contains(body, "Host header") {
		t.Errorf("POST /drain with Host evil.example = %d %q, want 403", code, body)
	}
	// A cross-site form post from a browser.
	if code, _, _ := hs.do(t, "POST", "/drain", map[string]string{"Sec-Fetch-Site": "cross-site"}); code != http.StatusForbidden {
		t.Errorf("cross-site POST /drain = %d, want 403", code)
	}
	if st := hs.lc.State(); st != lifecycle.Ready {
		t.Fatalf("state %s, want READY", st)
	}
	// localhost is a loopback name.
	if code, _, _ := hs.do(t, "POST", "/eject", map[string]string{"Host": "localhost:8081"}); code != http.StatusOK {
		t.Errorf("POST /eject with Host localhost = %d, want 200", code)
	}
}

// Without a token, GET /state and /readyz?verbose show error texts to
// loopback peers only, as the operator actions: a remote peer (the admin
// port listens on all interfaces by default) sees that the check failed,
// not its text.
func TestStateRedactedForRemotePeersWithoutToken(t *testing.T) {
	hs := newHarness(t, probes.Options{}, lifecycle.Options{Checks: budget.CheckOptions{
		Interval: 20 * time.Millisecond, Timeout: 10 * time.Millisecond, FailureThreshold: 999, SuccessThreshold: 1000}})
	hs.lc.AddCheck("db", func(context.Context) error {
		return errors.New("dial tcp db.internal.example:5432: connection refused")
	})
	hs.run(t)
	probes.PollUntil(t, 5*time.Second, "the check's first failure", func() bool {
		_, _, body := hs.do(t, "GET", "/state", nil)
		return strings.Contains(body, "db.internal.example")
	})
	rec := serveFrom(hs.h, "203.0.113.7:40000", "GET", "/state", nil)
	if body := rec.Body.String(); rec.Code != http.StatusOK || strings.Contains(body, "db.internal.example") ||
		!strings.Contains(body, `"error": "redacted"`) || !strings.Contains(body, "only loopback peers") {
		t.Errorf("GET /state from a remote peer = %d:\n%s", rec.Code, body)
	}
	rec = serveFrom(hs.h, "203.0.113.7:40000", "GET", "/readyz?verbose", nil)
	if body := rec.Body.String(); strings.Contains(body, "db.internal.example") || !strings.Contains(body, "[-]check db failed: redacted") {
		t.Errorf("GET /readyz?verbose from a remote peer:\n%s", body)
	}
}
