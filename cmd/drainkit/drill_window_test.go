package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/drill"
)

// windowJSON is what drill --json says of the propagation window's
// warnings (issue 32).
type windowJSON struct {
	Strategies []struct {
		Name           string `json:"name"`
		Failed         int    `json:"failed"`
		WindowWarnings []struct {
			Replica                 int    `json:"replica"`
			Callers                 string `json:"callers"`
			CallersDue              int    `json:"callers_due"`
			PropagationMaxAtLeastMs int64  `json:"propagation_max_at_least_ms"`
		} `json:"window_warnings"`
	} `json:"strategies"`
}

func parseWindow(t *testing.T, r result) windowJSON {
	t.Helper()
	var w windowJSON
	if err := json.Unmarshal([]byte(r.stdout), &w); err != nil {
		t.Fatalf("drill --json output: %v\n%s", err, r.stdout)
	}
	return w
}

// cachedSlow is issue 32's slow consumer behind a list cache, without
// Java: two cached consumers (each names itself, as consumer pods on IPs
// of their own are told apart), 2 requests/s each, one replica, a 20 s
// cache (one consumer keeps the old address about 16 s after SIGTERM,
// beyond the default propagation.max of 12s).
var cachedSlow = []string{"drill", "--json", "--strategies", "drainkit", "--consumer", "cached", "--consumer-cache", "20s",
	"--consumer-rate", "2", "--consumers", "2", "--replicas", "1", "--baseline", "3s", "--tail", "1s"}

var proposal = regexp.MustCompile(`propose: propagation.max (\S+), grace_period (\S+), terminationGracePeriodSeconds (\d+)`)

// TestDrillCachedConsumerLearnedWindow (issue 32): with the default
// timings the slow cached consumer loses requests, and the replica's
// warning names it (cached-N) and a figure; the evidence the drill's
// replica recorded (propagation.evidence_dir) makes `check --from-drains`
// fail the defaults and propose a window; the next drill with the
// proposal loses nothing and is not warned about, and check judges it OK.
func TestDrillCachedConsumerLearnedWindow(t *testing.T) {
	dir := t.TempDir()
	env := []string{"DRAINKIT_PROPAGATION_EVIDENCE_DIR=" + dir}

	first := parseWindow(t, drainkit(t, 2*time.Minute, env, cachedSlow...))
	s := first.Strategies[0]
	if s.Failed == 0 {
		t.Fatalf("defaults behind a 20s cache: no request failed; the drill did not exercise the window")
	}
	if len(s.WindowWarnings) == 0 {
		t.Fatalf("%d requests failed and no replica warned", s.Failed)
	}
	w := s.WindowWarnings[0]
	if w.CallersDue == 0 || !strings.Contains(w.Callers, `identity="cached-`) || w.PropagationMaxAtLeastMs <= 12000 {
		t.Errorf("warning %+v: want the cached consumer named and propagation.max above 12s", w)
	}
	t.Logf("defaults: %d failed; warned: %+v", s.Failed, w)

	p := checkProposal(t, dir)
	second := parseWindow(t, drainkit(t, 2*time.Minute, env, append(cachedSlow, "--propagation-max", p.max, "--grace-period", p.grace)...))
	if s := second.Strategies[0]; s.Failed != 0 || len(s.WindowWarnings) != 0 {
		t.Errorf("with the proposal (propagation.max %s, grace_period %s): %d failed, warnings %+v", p.max, p.grace, s.Failed, s.WindowWarnings)
	}
	checkEvidenceOK(t, dir, p)
}

// windowProposal is what `check --from-drains` proposed, as its flags take
// it.
type windowProposal struct{ max, grace, terminationGrace string }

// checkProposal runs `check --from-drains dir` after a drill whose windows
// were cut at propagation.max: it must fail (exit 1) and propose a window.
func checkProposal(t *testing.T, dir string) windowProposal {
	t.Helper()
	r := drainkit(t, 20*time.Second, nil, "check", "--from-drains", dir)
	t.Logf("check --from-drains after the cut drill:\n%s", r.stdout)
	m := proposal.FindStringSubmatch(r.stdout)
	if r.code != 1 || m == nil {
		t.Fatalf("check --from-drains: exit %d, want 1 with a proposal:\n%s%s", r.code, r.stdout, r.stderr)
	}
	return windowProposal{m[1], m[2], m[3]}
}

// checkEvidenceOK runs `check --from-drains dir` with the proposal p after
// a drill with it: the evidence must be judged OK (exit 0).
func checkEvidenceOK(t *testing.T, dir string, p windowProposal) {
	t.Helper()
	r := drainkit(t, 20*time.Second, nil, "check", "--from-drains", dir, "--propagation-max", p.max, "--grace-period", p.grace,
		"--termination-grace-period", p.terminationGrace)
	t.Logf("check --from-drains after the drill with the proposal:\n%s", r.stdout)
	if r.code != 0 || !strings.Contains(r.stdout, "evidence verdict: OK") {
		t.Errorf("check --from-drains with the proposal: exit %d, want 0 and evidence verdict OK:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// --consumer-rate is each consumer's rate, an alternative to --rate.
func TestDrillConsumerRateFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--consumer-rate", "2", "--rate", "5"}, "--rate and --consumer-rate: give one"},
		{[]string{"--consumer-rate", "0"}, "--consumer-rate: 0 is out of range"},
	} {
		r := drainkit(t, 20*time.Second, nil, append([]string{"drill"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("drill %v: exit %d, want 2 with %q:\n%s", c.args, r.code, c.want, r.stderr)
		}
	}
}

// --consumer spring is refused before anything starts when what it needs
// is missing: --nacos (named), the jar ($DRAINKIT_SPRING_JAR), another
// scenario than the rolling restart.
func TestDrillSpringConsumerNeeds(t *testing.T) {
	jar := filepath.Join(t.TempDir(), "consumer.jar")
	if err := os.WriteFile(jar, []byte("PK"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		env  []string
		args []string
		want string
	}{
		{[]string{drill.EnvSpringJar + "=" + jar}, nil, "--consumer spring: needs --nacos"},
		{[]string{drill.EnvSpringJar + "="}, []string{"--nacos", "127.0.0.1:8848"}, "--consumer spring: DRAINKIT_SPRING_JAR is unset"},
		{[]string{drill.EnvSpringJar + "=" + jar + ".missing"}, []string{"--nacos", "127.0.0.1:8848"}, "not a jar file"},
		{[]string{drill.EnvSpringJar + "=" + jar}, []string{"--nacos", "127.0.0.1:8848", "--scenario", "kill"}, "--consumer spring: --scenario kill"},
	} {
		r := drainkit(t, 20*time.Second, c.env, append([]string{"drill", "--consumer", "spring"}, c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("drill --consumer spring %v (%v): exit %d, want 2 with %q:\n%s", c.args, c.env, r.code, c.want, r.stderr)
		}
	}
}
