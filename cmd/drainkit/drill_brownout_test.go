package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// brownoutRun is one brownout run in `drill --json`: the scenario's
// common keys and its amplification and capacity figures.
type brownoutRun struct {
	scenarioRun
	Brownout *struct {
		Capacity      int     `json:"capacity_per_replica"`
		TryTimeout    float64 `json:"try_timeout_s"`
		Attempts      int     `json:"attempts"`
		Retries       int     `json:"retries"`
		Amplification float64 `json:"amplification"`
		RetryBudget   *int    `json:"retry_budget"`
		BudgetHeld    bool    `json:"retry_budget_held"`
		BudgetDenied  int     `json:"retries_refused_by_budget"`
		ShedByOthers  int     `json:"over_capacity_healthy"`
		ShedByVictim  int     `json:"over_capacity_browned_out"`
	} `json:"brownout"`
}

// brownoutArgs: 3 replicas, one browned out for 3 s under 200 requests/s,
// readiness probes every 500 ms.
var brownoutArgs = []string{"drill", "--json", "--scenario", "brownout", "--rate", "200", "--replicas", "3",
	"--baseline", "1s", "--tail", "1s", "--discovery-interval", "500ms", "--sequential"}

// parseBrownout checks the shape of a brownout drill: one run, one
// "brownout" event whose replica stayed listed (readiness 200: no registry
// decision), requests sent to it after the fault, and the figures.
func parseBrownout(t *testing.T, r result) brownoutRun {
	t.Helper()
	parseScenarios(t, r) // logs the runs, fails on an invalid drill
	var out struct {
		Strategies []brownoutRun `json:"strategies"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Strategies) != 1 || out.Strategies[0].Scenario != "brownout" {
		t.Fatalf("runs %+v, want one brownout run", out.Strategies)
	}
	s := out.Strategies[0]
	if s.Brownout == nil || s.Budget == nil || !strings.Contains(s.BudgetReason, "retry budget refused") {
		t.Fatalf("run %+v: want the brownout figures and a failure budget", s)
	}
	t.Logf("brownout figures: %+v", *s.Brownout)
	if len(s.Events) != 1 {
		t.Fatalf("events %+v, want one", s.Events)
	}
	if e := s.Events[0]; e.Kind != "brownout" || e.Decision != nil || e.LastSent == nil || *e.LastSent < e.Fault+1 {
		t.Errorf("event %+v: want a brownout the discovery never dropped (readiness 200) and requests sent to it for seconds after", e)
	}
	if b := s.Brownout; b.Attempts != s.Requests+b.Retries || b.Amplification < 1 {
		t.Errorf("attempts %d, requests %d, retries %d, amplification %.3f: inconsistent", b.Attempts, s.Requests, b.Retries, b.Amplification)
	}
	return s
}

// TestDrillScenarioBrownout: one of three replicas browns out (every
// request waits 5 s, readiness stays 200) under a fixed capacity of 64
// requests at once per replica. The drainkit consumer times each try out
// after 500 ms, ejects the instance and retries elsewhere within its retry
// budget: no request fails beyond the budget, the retries stay within the
// retry budget (amplification printed, above 1: it did retry), and the
// healthy replicas shed nothing. The naive consumer waits out the request
// timeout on every third request and fails far over the budget (the check
// can fail). (--exec of the README program, which has no brownout switch:
// TestDrillEveryScenarioOnExec.)
func TestDrillScenarioBrownout(t *testing.T) {
	parallelDrill(t, 200)
	t.Run("drainkit consumer", func(t *testing.T) {
		report := filepath.Join(t.TempDir(), "brownout.html")
		r := drainkit(t, 2*time.Minute, shortEnv, append(brownoutArgs, "--consumer", "drainkit", "--report", report)...)
		s := parseBrownout(t, r)
		b := s.Brownout
		if r.code != 0 || !s.Pass || s.Failed > *s.Budget {
			t.Errorf("exit %d: %d failed %v, budget %d: want within the budget\nstderr:\n%s", r.code, s.Failed, s.Kinds, *s.Budget, r.stderr)
		}
		if b.RetryBudget == nil || !b.BudgetHeld || b.Retries > *b.RetryBudget || b.Retries == 0 || b.Amplification > 1.25 {
			t.Errorf("retries %d of a budget %v, amplification %.3f: want some retries, within the retry budget", b.Retries, b.RetryBudget, b.Amplification)
		}
		if b.ShedByOthers != 0 || b.Capacity != 64 || b.TryTimeout != 0.5 {
			t.Errorf("%+v: want no request shed by the healthy replicas at a capacity of 64, tries of 500ms", *b)
		}
		if e := s.Events[0]; e.Ejection == nil || *e.Ejection-e.Fault > 3 {
			t.Errorf("event %+v: want the consumers' ejection within 3 s of the brownout", e)
		}
		t.Run("report renders in chromium", func(t *testing.T) {
			checkScenarioReport(t, report, "Scenario brownout", "Amplification", "over capacity")
		})
	})
	t.Run("naive consumer", func(t *testing.T) {
		r := drainkit(t, 2*time.Minute, shortEnv, append(brownoutArgs, "--consumer", "naive")...)
		s := parseBrownout(t, r)
		if r.code != 1 || s.Pass || s.Failed <= *s.Budget || s.Kinds["timeout"] == 0 {
			t.Errorf("exit %d: %d failed %v, budget %d: want timeouts over the budget and exit 1", r.code, s.Failed, s.Kinds, *s.Budget)
		}
		if b := s.Brownout; b.Retries != 0 || b.Amplification != 1 || b.RetryBudget != nil {
			t.Errorf("%+v: the naive consumer never retries", *b)
		}
		if e := s.Events[0]; e.Ejection != nil || e.Failed == 0 {
			t.Errorf("event %+v: want failures per second after the brownout and no ejection", e)
		}
	})
}

// checkScenarioReport renders report in Chromium: no console error, the
// four instants' headings and want in the page.
func checkScenarioReport(t *testing.T, report string, want ...string) {
	t.Helper()
	errs, dom := pageErrors(t, report)
	if len(errs) > 0 {
		t.Errorf("console errors in the report:\n%s", strings.Join(errs, "\n"))
	}
	for _, w := range append([]string{"registry decision", "first consumer view without", "last request to old address"}, want...) {
		if !strings.Contains(dom, w) {
			t.Errorf("the rendered report lacks %q", w)
		}
	}
}
