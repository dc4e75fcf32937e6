package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/consultest"
)

// drillJSON is the part of `drill --json` the tests read.
type drillJSON struct {
	Strategies []struct {
		Name           string         `json:"name"`
		Requests       int            `json:"requests"`
		Failed         int            `json:"failed"`
		FailuresByKind map[string]int `json:"failures_by_kind"`
		DrainSeconds   []float64      `json:"drain_seconds"`
		LateRequests   int64          `json:"late_requests"`
		LastLate       float64        `json:"last_late_arrival_seconds"`
		Window         float64        `json:"window_seconds"`
		Staleness      float64        `json:"consumer_staleness_seconds"`
		Verdict        string         `json:"verdict"`
		Error          string         `json:"error"`
		LateSends      int64          `json:"pacing_late_sends"`
		Replicas       []struct {
			ID         int                `json:"id"`
			Role       string             `json:"role"`
			ExitStatus string             `json:"exit_status"`
			Steps      map[string]float64 `json:"steps"`
			StepErrors map[string]string  `json:"step_errors"`
		} `json:"replicas"`
	} `json:"strategies"`
	Config      map[string]any `json:"config"`
	WallSeconds float64        `json:"wall_seconds"`
	Passed      bool           `json:"passed"`
}

func parseDrill(t *testing.T, r result) drillJSON {
	t.Helper()
	var out drillJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("drill --json output: %v\nstdout:\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	for _, s := range out.Strategies {
		t.Logf("%s: %d requests, %d failed %v, drain %v, late %d (last %.2fs), window %.2fs, staleness %.2fs, late sends %d\n  %s",
			s.Name, s.Requests, s.Failed, s.FailuresByKind, s.DrainSeconds, s.LateRequests, s.LastLate, s.Window, s.Staleness, s.LateSends, s.Verdict)
		if s.Error != "" {
			t.Errorf("%s did not complete: %s\nstderr:\n%s", s.Name, s.Error, r.stderr)
		}
	}
	t.Logf("wall %.1fs (process %.1fs)", out.WallSeconds, r.took.Seconds())
	return out
}

// TestDrillDefaults is the main job: `drainkit drill` with its defaults
// finishes in under 60 s, the drainkit strategy loses none of at least 5,000
// requests, and shutdown and exit lose some in the same run. The HTML report
// of the same run renders in headless Chromium.
func TestDrillDefaults(t *testing.T) {
	report := filepath.Join(t.TempDir(), "report.html")
	r := drainkit(t, 3*time.Minute, nil, "drill", "--json", "--report", report)
	out := parseDrill(t, r)
	if r.code != 0 {
		t.Errorf("exit status %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	if out.WallSeconds >= 60 || r.took >= 60*time.Second {
		t.Errorf("the drill took %.1fs (process %s): the default drill must finish under 60s", out.WallSeconds, r.took)
	}
	if len(out.Strategies) != 3 {
		t.Fatalf("%d strategies, want drainkit, shutdown, exit", len(out.Strategies))
	}
	byName := map[string]int{}
	for i, s := range out.Strategies {
		byName[s.Name] = i
	}
	dk := out.Strategies[byName["drainkit"]]
	if dk.Requests < 5000 || dk.Failed != 0 {
		t.Errorf("drainkit: %d failed of %d requests, want 0 of >= 5000", dk.Failed, dk.Requests)
	}
	if len(dk.DrainSeconds) != 3 || dk.LateRequests == 0 {
		t.Errorf("drainkit: drains %v, late arrivals %d: want 3 drains that saw late arrivals", dk.DrainSeconds, dk.LateRequests)
	}
	for _, name := range []string{"shutdown", "exit"} {
		s := out.Strategies[byName[name]]
		if s.Failed == 0 || s.FailuresByKind["refused"] == 0 {
			t.Errorf("%s: %d failed (%v): a drill that cannot show the difference proves nothing", name, s.Failed, s.FailuresByKind)
		}
		if !strings.HasPrefix(s.Verdict, "FAIL") {
			t.Errorf("%s verdict %q", name, s.Verdict)
		}
	}
	if !strings.Contains(r.stderr, "drainkit: ") || !strings.Contains(r.stderr, "req") {
		t.Errorf("no progress lines on stderr:\n%s", r.stderr)
	}
	if tm, ok := out.Config["timings"].(map[string]any); !ok || tm["propagation.min"] == nil {
		t.Errorf("config lacks the timings: %v", out.Config)
	}

	t.Run("report renders in chromium", func(t *testing.T) {
		checkReportInChromium(t, report, os.Getenv("DRAINKIT_KEEP_SCREENSHOT"))
	})
}

// TestDrillConsumerCache reproduces a consumer-side cache (Spring Cloud
// LoadBalancer's, here 3 s): a window capped at 1 s loses requests and the
// verdict blames the window; with the default max the quiet rule keeps the
// window open until the stale consumers stop, and nothing is lost.
func TestDrillConsumerCache(t *testing.T) {
	args := []string{"drill", "--json", "--strategies", "drainkit", "--replicas", "2", "--consumer-cache", "3s", "--baseline", "1s", "--tail", "1s"}
	t.Run("max 1s fails", func(t *testing.T) {
		r := drainkit(t, 2*time.Minute, []string{"DRAINKIT_PROPAGATION_MIN=1s", "DRAINKIT_PROPAGATION_MAX=1s"}, args...)
		out := parseDrill(t, r)
		if r.code != 1 {
			t.Errorf("exit status %d, want 1", r.code)
		}
		s := out.Strategies[0]
		if s.Failed == 0 {
			t.Fatalf("no failure with a 1s window and a 3s consumer cache")
		}
		if !strings.Contains(s.Verdict, "window is shorter than the consumers' staleness") {
			t.Errorf("verdict does not blame the window: %s", s.Verdict)
		}
		if s.LateRequests == 0 || s.Staleness <= s.Window {
			t.Errorf("late %d, staleness %.2fs, window %.2fs: the verdict must rest on the late arrivals", s.LateRequests, s.Staleness, s.Window)
		}
		if src, _ := out.Config["timing_sources"].(map[string]any); src["propagation.max"] != "env DRAINKIT_PROPAGATION_MAX" {
			t.Errorf("timing sources %v", out.Config["timing_sources"])
		}
	})
	t.Run("default max passes by the quiet rule", func(t *testing.T) {
		r := drainkit(t, 2*time.Minute, []string{"DRAINKIT_PROPAGATION_MIN=1s"}, args...)
		out := parseDrill(t, r)
		if r.code != 0 {
			t.Errorf("exit status %d, want 0", r.code)
		}
		s := out.Strategies[0]
		if s.Failed != 0 {
			t.Fatalf("%d failed: %v", s.Failed, s.FailuresByKind)
		}
		// The window outlasted propagation.min because late arrivals kept
		// coming: the quiet rule, not min, ended it.
		if s.Window <= 1.5 || s.Window < s.LastLate+0.9 {
			t.Errorf("window %.2fs, last late arrival %.2fs: the quiet rule did not hold the window open", s.Window, s.LastLate)
		}
	})
}

// TestDrillConsul runs the drainkit strategy with Consul discovery against a
// real dev agent: replicas register and deregister, consumers watch.
func TestDrillConsul(t *testing.T) {
	agent := consultest.Start(t)
	r := drainkit(t, 2*time.Minute, []string{"DRAINKIT_PROPAGATION_MIN=2s"},
		"drill", "--json", "--strategies", "drainkit", "--replicas", "2", "--consul", agent.HTTPAddr, "--baseline", "1s", "--tail", "1s")
	out := parseDrill(t, r)
	if r.code != 0 {
		t.Errorf("exit status %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	s := out.Strategies[0]
	if s.Failed != 0 || s.Requests < 1000 {
		t.Fatalf("%d failed of %d: %v", s.Failed, s.Requests, s.FailuresByKind)
	}
	if out.Config["discovery"] != "consul watch" {
		t.Errorf("discovery %v", out.Config["discovery"])
	}
	// Each replaced replica deregistered at the drain's start, the agent
	// confirmed it, and the window began only then.
	for _, rp := range s.Replicas {
		if rp.Role != "initial" {
			continue
		}
		dereg, ok := rp.Steps["deregistered"]
		_, confirmed := rp.Steps["confirmed"]
		if !ok || !confirmed || len(rp.StepErrors) > 0 || dereg > 1 {
			t.Errorf("r%d: steps %v, errors %v: want deregistered (within 1s) and confirmed", rp.ID, rp.Steps, rp.StepErrors)
		}
		if rp.ExitStatus != "exit status 0" {
			t.Errorf("r%d: %s", rp.ID, rp.ExitStatus)
		}
	}
}

// TestDrillExec drills a binary given with --exec (here drainkit's own serve
// mode), configured through DRAINKIT_* variables and --http-addr/--admin-addr.
func TestDrillExec(t *testing.T) {
	r := drainkit(t, 2*time.Minute, []string{"DRAINKIT_PROPAGATION_MIN=1s"},
		"drill", "--json", "--exec", binary, "--exec-arg", "serve", "--exec-arg", "--strategy=drainkit",
		"--replicas", "2", "--baseline", "500ms", "--tail", "500ms")
	out := parseDrill(t, r)
	if len(out.Strategies) != 1 || out.Strategies[0].Name != "drainkit" {
		t.Fatalf("strategies %+v, want one named after the binary", out.Strategies)
	}
	if s := out.Strategies[0]; r.code != 0 || s.Failed != 0 || len(s.DrainSeconds) != 2 {
		t.Fatalf("exit %d, %d failed, drains %v", r.code, s.Failed, s.DrainSeconds)
	}
}

func TestDrillBadFlags(t *testing.T) {
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"drill", "--strategies", "nope"}, `--strategies: "nope" is not a strategy`},
		{nil, []string{"drill", "--replicas", "0"}, "--replicas: 0 is out of range"},
		{[]string{"DRAINKIT_PROPAGATION_MIN=banana"}, []string{"drill"}, "propagation.min"},
		{nil, []string{"drill", "--propagation-max", "2s"}, "propagation"},
	} {
		r := drainkit(t, 30*time.Second, tc.env, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want 2 and %q", tc.env, tc.args, r.code, r.stderr, tc.want)
		}
	}
}
