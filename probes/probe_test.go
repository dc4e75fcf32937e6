package probes_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/probes"
)

// want is one row of DESIGN.md section 2's table.
type want struct{ startupz, readyz, livez int }

const (
	ok  = http.StatusOK
	bad = http.StatusServiceUnavailable
)

func checkTable(t *testing.T, hs *harness, state lifecycle.State, w want) {
	t.Helper()
	if got := hs.lc.State(); got != state {
		t.Fatalf("state %s, want %s", got, state)
	}
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		for path, code := range map[string]int{"/startupz": w.startupz, "/readyz": w.readyz, "/livez": w.livez} {
			if got := hs.code(t, method, path); got != code {
				t.Errorf("%s: %s %s = %d, want %d", state, method, path, got, code)
			}
		}
	}
}

func TestProbeTableAcrossStates(t *testing.T) {
	hs := newHarness(t, probes.Options{}, lifecycle.Options{})
	checkTable(t, hs, lifecycle.Starting, want{bad, bad, ok})

	hs.run(t)
	checkTable(t, hs, lifecycle.Ready, want{ok, ok, ok})

	if err := hs.lc.Eject("test"); err != nil {
		t.Fatal(err)
	}
	checkTable(t, hs, lifecycle.Ejected, want{ok, bad, ok})

	if err := hs.lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	// The gate holds in-flight work, so the lifecycle stays in DRAINING.
	<-hs.window.ended
	checkTable(t, hs, lifecycle.Draining, want{ok, bad, ok})

	hs.stop(t)
	checkTable(t, hs, lifecycle.Stopped, want{bad, bad, bad})
}

func TestVerboseListsChecks(t *testing.T) {
	hs := newHarness(t, probes.Options{}, lifecycle.Options{Checks: budget.CheckOptions{
		Interval: 10 * time.Millisecond, Timeout: 10 * time.Millisecond, FailureThreshold: 999, SuccessThreshold: 1000,
	}})
	hs.lc.AddCheck("db", func(context.Context) error { return nil })
	hs.lc.AddCheck("cache", func(context.Context) error { return errors.New("connection refused") })

	// Before any round: not run yet.
	_, _, body := hs.do(t, "GET", "/readyz?verbose", nil)
	mustContain(t, body, "[-]state failed: STARTING", "check db", "not run yet", "readyz check failed")

	hs.run(t)
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, hdr, body := hs.do(t, "GET", "/readyz?verbose", nil)
		if strings.Contains(body, "connection refused") {
			// READY despite a failing check: one failed round is below the threshold.
			if code != ok {
				t.Errorf("readyz = %d, want 200 (failure threshold not reached)", code)
			}
			mustContain(t, body, "[+]state ok: READY", "[+]check db ok", "[-]check cache failed: connection refused", "readyz check passed")
			if ct := hdr.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
				t.Errorf("Content-Type %q", ct)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no check results after 5s: %q", body)
		}
		time.Sleep(5 * time.Millisecond)
	}

	// Without ?verbose the body is a single summary line.
	if _, _, body := hs.do(t, "GET", "/readyz", nil); body != "readyz check passed\n" {
		t.Errorf("readyz body %q", body)
	}
	_, _, body = hs.do(t, "GET", "/livez?verbose", nil)
	mustContain(t, body, "[+]state ok: READY", "[+]watchdog ok: last tick", "livez check passed")
	_, _, body = hs.do(t, "GET", "/startupz?verbose=1", nil)
	mustContain(t, body, "[+]state ok: READY", "startupz check passed")
}

func TestWrongMethodIs405WithAllow(t *testing.T) {
	hs := newHarness(t, probes.Options{}, lifecycle.Options{})
	for _, tc := range []struct{ method, path, allow string }{
		{"POST", "/livez", "GET, HEAD"},
		{"PUT", "/readyz", "GET, HEAD"},
		{"DELETE", "/startupz", "GET, HEAD"},
		{"POST", "/state", "GET, HEAD"},
		{"GET", "/drain", "POST"},
		{"HEAD", "/eject", "POST"},
		{"PUT", "/restore", "POST"},
	} {
		code, hdr, _ := hs.do(t, tc.method, tc.path, nil)
		if code != http.StatusMethodNotAllowed {
			t.Errorf("%s %s = %d, want 405", tc.method, tc.path, code)
		}
		if got := hdr.Get("Allow"); got != tc.allow {
			t.Errorf("%s %s: Allow %q, want %q", tc.method, tc.path, got, tc.allow)
		}
	}
	if code := hs.code(t, "GET", "/nope"); code != http.StatusNotFound {
		t.Errorf("GET /nope = %d, want 404", code)
	}
	if hs.lc.State() != lifecycle.Starting {
		t.Errorf("a refused method changed the state to %s", hs.lc.State())
	}
}
