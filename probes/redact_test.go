package probes_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/lifecycle/lifecycletest"
	"github.com/drainkit/drainkit/probes"
)

// failingLater is a test server whose Serve fails with the error sent on
// fail, as a server whose upstream broke after it started serving.
type failingLater struct {
	*lifecycletest.Server
	fail chan error
}

func (s failingLater) Serve(h lifecycle.ServerHooks) error {
	served := make(chan error, 1)
	go func() { served <- s.Server.Serve(h) }() // returns at CloseListeners
	select {
	case err := <-s.fail:
		return err
	case err := <-served:
		return err
	}
}

// stateView is the part of GET /state the redaction test reads.
type stateView struct {
	State  string `json:"state"`
	Cause  string `json:"cause"`
	Reason string `json:"reason"`
	Checks []struct {
		Err string `json:"error"`
	}
	Timeline *struct {
		Reason string `json:"reason"`
	} `json:"timeline"`
	Redacted string `json:"redacted"`
}

// TestStateRedactsReasons: a server failing with a DSN that holds a
// password starts the drain, and the lifecycle writes its error into the
// state's reason and the timeline's; a readiness check fails with the same
// DSN. A caller the loopback-or-token rule accepts sees all three texts; any
// other caller (a remote peer without a token, a caller without the token
// when one is set) sees the state, the cause and that there is a reason and
// an error, each "redacted", and the password nowhere.
func TestStateRedactsReasons(t *testing.T) {
	const secret = "s3cret-pw"
	dsnErr := errors.New("dial postgres://app:" + secret + "@db.internal.example:5432/app: connection refused")
	for _, tc := range []struct {
		name    string
		token   string
		allowed func(hs *harness) string // GET /state as an authorised caller
		refused func(hs *harness) string // GET /state as a caller that is not
	}{
		{name: "loopback rule, remote peer",
			allowed: func(hs *harness) string { _, _, body := hs.do(t, "GET", "/state", nil); return body },
			refused: func(hs *harness) string {
				return serveFrom(hs.h, "203.0.113.7:40000", "GET", "/state", nil).Body.String()
			}},
		{name: "token, loopback caller without it", token: "tok-123",
			allowed: func(hs *harness) string {
				_, _, body := hs.do(t, "GET", "/state", map[string]string{"Authorization": "Bearer tok-123"})
				return body
			},
			refused: func(hs *harness) string { _, _, body := hs.do(t, "GET", "/state", nil); return body }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hs := newHarness(t, probes.Options{Token: tc.token}, lifecycle.Options{Checks: budget.CheckOptions{
				Interval: 20 * time.Millisecond, Timeout: 10 * time.Millisecond, FailureThreshold: 999, SuccessThreshold: 1000}})
			hs.lc.AddCheck("db", func(context.Context) error { return dsnErr })
			srv := failingLater{lifecycletest.NewServer(), make(chan error, 1)}
			hs.lc.AddServer("pg-proxy", srv)
			hs.run(t)
			probes.PollUntil(t, 5*time.Second, "the check's first failure", func() bool {
				return strings.Contains(tc.allowed(hs), secret)
			})
			srv.fail <- dsnErr
			waitState(t, hs.lc, lifecycle.Draining) // the gate's request keeps it there

			var full stateView
			body := tc.allowed(hs)
			if err := json.Unmarshal([]byte(body), &full); err != nil {
				t.Fatalf("%v\n%s", err, body)
			}
			if full.Cause != "failure" || !strings.Contains(full.Reason, secret) || full.Timeline == nil ||
				!strings.Contains(full.Timeline.Reason, secret) || len(full.Checks) != 1 || !strings.Contains(full.Checks[0].Err, secret) ||
				full.Redacted != "" {
				t.Errorf("authorised GET /state: want the failure's text in reason, timeline.reason and the check's error:\n%s", body)
			}

			var red stateView
			body = tc.refused(hs)
			if err := json.Unmarshal([]byte(body), &red); err != nil {
				t.Fatalf("%v\n%s", err, body)
			}
			if strings.Contains(body, secret) || strings.Contains(body, "db.internal.example") {
				t.Errorf("GET /state without authorisation shows the DSN:\n%s", body)
			}
			if red.State != "DRAINING" || red.Cause != "failure" || red.Reason != "redacted" || red.Timeline == nil ||
				red.Timeline.Reason != "redacted" || len(red.Checks) != 1 || red.Checks[0].Err != "redacted" ||
				!strings.Contains(red.Redacted, "reasons") {
				t.Errorf("GET /state without authorisation: want state, cause, and reasons and error redacted, saying so:\n%s", body)
			}

			hs.gate() // the drain ends; Run reports the server's failure
			select {
			case err := <-hs.runErr:
				if !errors.Is(err, dsnErr) {
					t.Errorf("Run: %v, want the server's failure", err)
				}
				hs.runErr = nil
			case <-time.After(10 * time.Second):
				t.Fatal("Run did not return within 10s")
			}
		})
	}
}

// TestRoutes: Handler serves every endpoint of Routes, the list a program
// mounting handlers beside it is checked against (drainkit.WithAdminHandler).
// The list is written out here too, so that an endpoint dropped from Routes
// (and so open to be taken over) fails this test, as does one added to
// Routes without being listed here.
func TestRoutes(t *testing.T) {
	want := []probes.Route{
		{Method: http.MethodGet, Path: "/startupz"},
		{Method: http.MethodGet, Path: "/readyz"},
		{Method: http.MethodGet, Path: "/livez"},
		{Method: http.MethodGet, Path: "/servingz"},
		{Method: http.MethodGet, Path: "/state"},
		{Method: http.MethodPost, Path: "/drain"},
		{Method: http.MethodPost, Path: "/eject"},
		{Method: http.MethodPost, Path: "/restore"},
	}
	got := probes.Routes()
	if len(got) != len(want) {
		t.Errorf("Routes() = %v, want %v", got, want)
	}
	for _, r := range want {
		found := false
		for _, g := range got {
			found = found || g == r
		}
		if !found {
			t.Errorf("Routes() lacks %s", r)
		}
	}
	// With a token, a request without it changes nothing: the POST
	// endpoints answer 403, the GET ones 200 or 503; none is 404 or 405.
	hs := newHarness(t, probes.Options{Token: "tok-123"}, lifecycle.Options{})
	for _, r := range want {
		if code, _, body := hs.do(t, r.Method, r.Path, nil); code == http.StatusNotFound || code == http.StatusMethodNotAllowed {
			t.Errorf("%s = %d %q: not served", r, code, body)
		}
	}
	if code, _, _ := hs.do(t, http.MethodGet, "/nope", nil); code != http.StatusNotFound {
		t.Errorf("GET /nope = %d, want 404", code)
	}
}
