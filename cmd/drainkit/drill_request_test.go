package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// drillBook drills testdata/bookservice with env (BOOKSERVICE_*) and extra
// flags: one replica, a short load.
func drillBook(t *testing.T, env []string, args ...string) (result, drillJSON) {
	t.Helper()
	r := drainkit(t, 2*time.Minute, append([]string{"DRAINKIT_PROPAGATION_MIN=500ms"}, env...),
		append([]string{"drill", "--json", "--exec", bookBin, "--replicas", "1", "--rate", "50", "--baseline", "1s", "--tail", "0s"}, args...)...)
	var out drillJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("drill --json output: %v\n%s\n%s", err, r.stdout, r.stderr)
	}
	return r, out
}

// TestDrillUnhealthyServiceIsNotTheMachine: a service answering 503 on /
// from the start, at a rate any machine sustains, is reported as an
// unhealthy service (exit 4, invalid_cause "service", naming the status and
// the request), never as a machine that could not sustain the load; the
// same service drilled on an endpoint that answers (--path /ok) passes.
func TestDrillUnhealthyServiceIsNotTheMachine(t *testing.T) {
	parallelDrill(t, 50)
	r, out := drillBook(t, []string{"BOOKSERVICE_STATUS=503"})
	if r.code != 4 || out.Valid || out.Passed {
		t.Fatalf("exit %d, valid %v, passed %v: want 4, invalid, not passed\n%s", r.code, out.Valid, out.Passed, r.stderr)
	}
	var cause struct {
		Cause string `json:"invalid_cause"`
	}
	_ = json.Unmarshal([]byte(r.stdout), &cause)
	if cause.Cause != "service" {
		t.Errorf("invalid_cause %q, want service", cause.Cause)
	}
	for _, want := range []string{"the service under drill is unhealthy, not the machine", "Service Unavailable", "GET /", "--path"} {
		if !strings.Contains(out.InvalidReason, want) {
			t.Errorf("reason lacks %q: %s", want, out.InvalidReason)
		}
	}
	for _, bad := range []string{"could not sustain", "lower --rate"} {
		if strings.Contains(out.InvalidReason, bad) || strings.Contains(r.stderr, bad) {
			t.Errorf("the machine is blamed (%q):\nreason %s\nstderr %s", bad, out.InvalidReason, r.stderr)
		}
	}
	if !strings.Contains(r.stderr, "answered HTTP errors (5xx) before any replica was stopped") {
		t.Errorf("stderr lacks the service's verdict:\n%s", r.stderr)
	}
	for _, s := range out.Strategies {
		if !strings.HasPrefix(s.Verdict, "NOT JUDGED") || !strings.Contains(s.Verdict, "the service answered HTTP errors") {
			t.Errorf("%s: verdict %q", s.Name, s.Verdict)
		}
	}

	r, out = drillBook(t, []string{"BOOKSERVICE_STATUS=503"}, "--path", "/ok")
	if r.code != 0 || !out.Valid || out.Config["path"] != "/ok" {
		t.Fatalf("--path /ok: exit %d, valid %v (%s), config path %v\n%s", r.code, out.Valid, out.InvalidReason, out.Config["path"], r.stderr)
	}
}

// TestDrillMethodPathBody: --method, --path and --body reach the service
// (bookservice answers 500 to any other request line and body), and the
// result says what was sent.
func TestDrillMethodPathBody(t *testing.T) {
	parallelDrill(t, 50)
	r, out := drillBook(t, []string{`BOOKSERVICE_WANT=PUT /orders/7?dry=1 {"qty":2}`},
		"--method", "PUT", "--path", "/orders/7?dry=1", "--body", `{"qty":2}`)
	if r.code != 0 || !out.Valid || len(out.Strategies) != 1 || out.Strategies[0].Failed != 0 {
		t.Fatalf("exit %d, valid %v (%s)\n%s", r.code, out.Valid, out.InvalidReason, r.stderr)
	}
	if out.Config["method"] != "PUT" || out.Config["path"] != "/orders/7?dry=1" || out.Config["body_bytes"] != float64(9) {
		t.Errorf("config %v", out.Config)
	}
}
