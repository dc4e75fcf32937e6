package main

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/registry/consul/consultest"
	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
)

// scenarioEvent is one fault in `drill --json`.
type scenarioEvent struct {
	Kind              string   `json:"kind"`
	Replica           int      `json:"replica"`
	Fault             float64  `json:"fault_s"`
	Decision          *float64 `json:"registry_decision_s"`
	DecisionRevision  *uint64  `json:"registry_decision_revision"`
	ConsumerView      *float64 `json:"first_consumer_view_without_s"`
	ConsumerRevision  *uint64  `json:"first_consumer_view_revision"`
	Ejection          *float64 `json:"first_ejection_s"`
	LastSent          *float64 `json:"last_request_to_old_address_s"`
	FailuresPerSecond []int    `json:"failures_per_second"`
	Failed            int      `json:"failed"`
	Added             bool     `json:"added"`
	FirstSent         *float64 `json:"first_request_to_new_address_s"`
	Ready             *float64 `json:"ready_s"`
	EarlyRequests     int      `json:"requests_before_ready"`
}

// scenarioRun is one scenario's run of a strategy in `drill --json`.
type scenarioRun struct {
	Scenario     string          `json:"scenario"`
	Name         string          `json:"name"`
	Consumer     string          `json:"consumer"`
	Requests     int             `json:"requests"`
	Failed       int             `json:"failed"`
	Kinds        map[string]int  `json:"failures_by_kind"`
	Budget       *int            `json:"failure_budget"`
	BudgetReason string          `json:"failure_budget_reason"`
	Pass         bool            `json:"pass"`
	Verdict      string          `json:"verdict"`
	Error        string          `json:"error"`
	Events       []scenarioEvent `json:"events"`
	// EjectionBound is the slow-probe scenario's bound, seconds.
	EjectionBound float64 `json:"ejection_bound_s"`
	// OutageStart and OutageEnd bound the registry-outage scenario's outage.
	OutageStart *float64 `json:"registry_outage_start_s"`
	OutageEnd   *float64 `json:"registry_outage_end_s"`
	// LateConsumers are the consumers the registry-outage scenario starts
	// during the outage.
	LateConsumers []struct {
		Snapshot bool     `json:"with_snapshot"`
		Started  float64  `json:"started_s"`
		Served   string   `json:"served_snapshot"`
		Age      *float64 `json:"snapshot_age_s"`
		Requests int      `json:"requests"`
		Failed   int      `json:"failed"`
		Error    string   `json:"error"`
	} `json:"late_consumers"`
}

// scenarioJSON is the part of `drill --json` the scenario tests read.
type scenarioJSON struct {
	Strategies []scenarioRun `json:"strategies"`
	Config     struct {
		Scenarios []string `json:"scenarios"`
	} `json:"config"`
	Passed        bool   `json:"passed"`
	Valid         bool   `json:"valid"`
	InvalidReason string `json:"invalid_reason"`
}

func parseScenarios(t *testing.T, r result) scenarioJSON {
	t.Helper()
	var out scenarioJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("drill --json output: %v\nstdout:\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
	for _, s := range out.Strategies {
		t.Logf("%s/%s (%s): %d of %d failed %v, budget %v; events %+v\n  %s", s.Scenario, s.Name, s.Consumer, s.Failed, s.Requests, s.Kinds, s.Budget, s.Events, s.Verdict)
		if s.Error != "" {
			t.Errorf("%s/%s did not complete: %s\nstderr:\n%s", s.Scenario, s.Name, s.Error, r.stderr)
		}
	}
	if !out.Valid {
		t.Fatalf("the drill was invalid: %s", out.InvalidReason)
	}
	return out
}

// TestDrillScenarioList: --scenario list describes every scenario and the
// four instants in lines of at most 120 columns; an unknown scenario is bad
// usage naming the flag.
func TestDrillScenarioList(t *testing.T) {
	parallelDrill(t, 0)
	r := drainkit(t, 30*time.Second, nil, "drill", "--scenario", "list")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	checkFits120(t, r.stdout)
	for _, want := range []string{"\nwarmup\n", "\nrolling\n", "\nkill\n", "\nslow-probe\n", "\nregistry-outage\n", "\nbrownout\n", "\nlong-lived\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--scenario list lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, want := range []string{"registry's decision", "first consumer view without", "last request sent to the old address"} {
		if !strings.Contains(flat(r.stdout), want) {
			t.Errorf("--scenario list lacks %q:\n%s", want, r.stdout)
		}
	}
	r = drainkit(t, 30*time.Second, nil, "drill", "--scenario", "rolling,nope")
	if r.code != 2 || !strings.Contains(r.stderr, `--scenario: "nope" is not a scenario`) {
		t.Errorf("--scenario nope: exit %d, stderr %q: want 2 naming the flag", r.code, r.stderr)
	}
}

// killArgs keep a kill drill near 10 s: 3 replicas, one killed, readiness
// probes every 500 ms.
var killArgs = []string{"drill", "--json", "--scenario", "kill", "--rate", "200", "--replicas", "3",
	"--baseline", "1s", "--tail", "1s", "--discovery-interval", "500ms"}

// TestDrillScenarioKill: kill -9 of a READY replica. The drainkit consumer
// resends the refused requests and ejects the dead instance, so at most the
// requests written to it and unanswered fail (the printed budget); the
// naive consumer keeps sending to the dead address until the readiness
// probes drop it and fails over the budget (the check can fail). Each
// fault has its four instants in order, and the HTML report shows them.
func TestDrillScenarioKill(t *testing.T) {
	parallelDrill(t, 200)
	t.Run("drainkit consumer", func(t *testing.T) {
		report := filepath.Join(t.TempDir(), "kill.html")
		r := drainkit(t, 2*time.Minute, shortEnv, append(killArgs, "--consumer", "drainkit", "--report", report)...)
		out := parseScenarios(t, r)
		s := checkKill(t, out)
		if r.code != 0 || !s.Pass || s.Failed > *s.Budget {
			t.Errorf("exit %d: %d failed, budget %d: want within the budget\nstderr:\n%s", r.code, s.Failed, *s.Budget, r.stderr)
		}
		if e := s.Events[0]; e.Ejection == nil {
			t.Errorf("no consumer ejected the dead instance: %+v", e)
		}
		t.Run("report renders in chromium", func(t *testing.T) {
			if dom := checkInstantMarks(t, report, out.Strategies); !strings.Contains(dom, "Failure budget") {
				t.Errorf("the rendered report lacks the failure budget")
			}
		})
	})
	t.Run("naive consumer", func(t *testing.T) {
		r := drainkit(t, 2*time.Minute, shortEnv, append(killArgs, "--consumer", "naive")...)
		out := parseScenarios(t, r)
		s := checkKill(t, out)
		if r.code != 1 || s.Pass || s.Failed <= *s.Budget || s.Kinds["refused"] == 0 {
			t.Errorf("exit %d: %d failed %v, budget %d: want refused requests over the budget and exit 1", r.code, s.Failed, s.Kinds, *s.Budget)
		}
		if e := s.Events[0]; e.Failed == 0 || *e.LastSent-e.Fault < 0.1 {
			t.Errorf("event %+v: want failures per second after the kill and requests sent to the dead address", e)
		}
	})
}

// checkKill checks the shape of a kill drill: one run, one SIGKILL event
// whose instants all happened in order, and a budget.
func checkKill(t *testing.T, out scenarioJSON) scenarioRun {
	t.Helper()
	if len(out.Strategies) != 1 || out.Strategies[0].Scenario != "kill" {
		t.Fatalf("runs %+v, want one kill run", out.Strategies)
	}
	if len(out.Config.Scenarios) != 1 || out.Config.Scenarios[0] != "kill" {
		t.Errorf("config scenarios %v", out.Config.Scenarios)
	}
	s := out.Strategies[0]
	if s.Budget == nil || !strings.Contains(s.BudgetReason, "written") {
		t.Fatalf("no failure budget: %v %q", s.Budget, s.BudgetReason)
	}
	if len(s.Events) != 1 {
		t.Fatalf("events %+v, want one", s.Events)
	}
	e := s.Events[0]
	if e.Kind != "SIGKILL" || e.Decision == nil || e.ConsumerView == nil || e.LastSent == nil || e.DecisionRevision == nil || e.ConsumerRevision == nil {
		t.Fatalf("event %+v: want a SIGKILL with all four instants and both revisions", e)
	}
	if !(e.Fault <= *e.Decision && *e.Decision <= *e.ConsumerView+0.05) || *e.LastSent < e.Fault || len(e.FailuresPerSecond) == 0 {
		t.Errorf("event %+v: want fault <= registry decision <= consumer view, a last request after the fault and failures per second", e)
	}
	return s
}

// warmupArgs: 2 replicas, then a third whose warm-up takes 2 s, readiness
// probes every 500 ms.
var warmupArgs = []string{"drill", "--json", "--scenario", "warmup", "--rate", "200", "--replicas", "2",
	"--baseline", "1s", "--tail", "1s", "--discovery-interval", "500ms", "--warmup", "2s"}

// TestDrillScenarioWarmup: a replica started under load with a 2 s warm-up.
// drainkit fails readiness until it is warm: no request before READY, none
// failed. The shutdown strategy reports ready at once, as services without a
// startup gate do, and fails the requests of its warm-up (the check can
// fail). (--exec of the README program: TestDrillEveryScenarioOnExec.)
func TestDrillScenarioWarmup(t *testing.T) {
	parallelDrill(t, 400)
	t.Run("built-in", func(t *testing.T) {
		r := drainkit(t, 2*time.Minute, shortEnv, append(warmupArgs, "--strategies", "drainkit,shutdown")...)
		out := parseScenarios(t, r)
		if len(out.Strategies) != 2 {
			t.Fatalf("runs %+v, want drainkit and shutdown", out.Strategies)
		}
		for _, s := range out.Strategies {
			e := checkStart(t, s)
			switch s.Name {
			case "drainkit":
				if s.Failed != 0 || !s.Pass || e.EarlyRequests != 0 {
					t.Errorf("drainkit: %d failed, %d before READY: want none", s.Failed, e.EarlyRequests)
				}
				if *e.Ready-e.Fault < 1.9 || *e.Decision < *e.Ready || *e.FirstSent < *e.Ready {
					t.Errorf("drainkit: event %+v: want READY after the 2 s warm-up, listed and sent to only after it", e)
				}
			case "shutdown":
				if s.Pass || s.Kinds["5xx"] == 0 || e.Failed == 0 {
					t.Errorf("shutdown: %d failed %v: want the warm-up's 503s", s.Failed, s.Kinds)
				}
			}
		}
		if r.code != 0 {
			t.Errorf("exit %d, want 0 (drainkit passed)\nstderr:\n%s", r.code, r.stderr)
		}
	})
}

// checkStart checks that run s has one start event with its instants.
func checkStart(t *testing.T, s scenarioRun) scenarioEvent {
	t.Helper()
	if s.Scenario != "warmup" || len(s.Events) != 1 {
		t.Fatalf("%s/%s: events %+v, want one start", s.Scenario, s.Name, s.Events)
	}
	e := s.Events[0]
	if e.Kind != "start" || !e.Added || e.Ready == nil || e.Decision == nil || e.ConsumerView == nil || e.FirstSent == nil || e.LastSent != nil {
		t.Fatalf("%s: event %+v: want a start with READY, the registry's decision, a consumer view and a first request", s.Name, e)
	}
	if !(e.Fault <= *e.Decision && *e.Decision <= *e.ConsumerView+0.05 && *e.ConsumerView <= *e.FirstSent+0.05) {
		t.Errorf("%s: event %+v: want start <= registry decision <= consumer view <= first request", s.Name, e)
	}
	return e
}

// checksEnv makes the replicas' readiness checks fast: a round every
// 500 ms, a check failing after 300 ms, ejected after 2 failed rounds.
var checksEnv = append([]string{"DRAINKIT_CHECKS_INTERVAL=500ms", "DRAINKIT_CHECKS_TIMEOUT=300ms",
	"DRAINKIT_CHECKS_FAILURE_THRESHOLD=2", "DRAINKIT_CHECKS_SUCCESS_THRESHOLD=3"}, shortEnv...)

// TestDrillScenarioSlowProbe: one replica's readiness check blocks under
// load. No request fails (requests never wait for a check), and the
// discovery drops the instance within what checks.* say, and the HTML
// report marks the four instants. (--exec of the README program, which has
// no check to block: TestDrillEveryScenarioOnExec.)
func TestDrillScenarioSlowProbe(t *testing.T) {
	parallelDrill(t, 200)
	args := []string{"drill", "--json", "--scenario", "slow-probe", "--rate", "200", "--replicas", "3",
		"--baseline", "1s", "--tail", "1s", "--discovery-interval", "500ms"}
	t.Run("built-in", func(t *testing.T) {
		report := filepath.Join(t.TempDir(), "slow-probe.html")
		r := drainkit(t, 2*time.Minute, checksEnv, append(args, "--report", report)...)
		out := parseScenarios(t, r)
		if len(out.Strategies) != 1 || len(out.Strategies[0].Events) != 1 {
			t.Fatalf("runs %+v, want one with one event", out.Strategies)
		}
		s := out.Strategies[0]
		e := s.Events[0]
		if r.code != 0 || !s.Pass || s.Failed != 0 {
			t.Errorf("exit %d: %d failed: want none\nstderr:\n%s", r.code, s.Failed, r.stderr)
		}
		if e.Kind != "check blocks" || e.Decision == nil || e.ConsumerView == nil || e.LastSent == nil {
			t.Fatalf("event %+v: want the four instants", e)
		}
		// 2 failed rounds of 500 ms: not before one round, within the bound.
		if d := *e.Decision - e.Fault; d < 0.5 || d > s.EjectionBound {
			t.Errorf("dropped %.2fs after the check blocked, want 0.5s..%.2fs", d, s.EjectionBound)
		}
		if marks := instantMarks(s); len(marks) != 4 {
			t.Errorf("instants %q, want all four", marks)
		}
		checkInstantMarks(t, report, out.Strategies)
	})
}

// TestDrillScenarioRegistryOutage: the registry (etcd, then a Consul
// agent) becomes unreachable for 2 s under load (a proxy resets every
// connection); the drainkit strategy's consumers keep calling on their last
// view and fail nothing, and the replacement after the return is picked up:
// its stop has all four instants, the registry's decision after the outage.
// Two consumers start during the outage: the one with a last-good snapshot
// (written by the same consumer before it) serves it, with its age, and
// fails nothing; the one without has no view and fails every call, naming
// it (consumer.ErrNoInstance): the check that the outage cut the registry
// off. (--exec: TestDrillEveryScenarioOnExec.)
func TestDrillScenarioRegistryOutage(t *testing.T) {
	parallelDrill(t, 200)
	args := []string{"drill", "--json", "--scenario", "registry-outage", "--outage", "2s",
		"--consumer", "drainkit", "--rate", "200", "--replicas", "2", "--baseline", "1s", "--tail", "1s"}
	env := []string{"DRAINKIT_PROPAGATION_MIN=2s"}
	t.Run("etcd", func(t *testing.T) {
		s := etcdtest.Start(t)
		args := append(slices.Clip(args), "--etcd", s.Endpoint)
		checkOutage(t, drainkit(t, 2*time.Minute, env, args...))
	})
	t.Run("consul", func(t *testing.T) {
		agent := consultest.Start(t)
		checkOutage(t, drainkit(t, 2*time.Minute, env, append(slices.Clip(args), "--consul", agent.HTTPAddr)...))
	})
	t.Run("needs a registry", func(t *testing.T) {
		r := drainkit(t, 30*time.Second, nil, "drill", "--scenario", "registry-outage")
		if r.code != 2 || !strings.Contains(r.stderr, "give --etcd or --consul") {
			t.Errorf("exit %d, stderr %q: want 2 asking for a registry", r.code, r.stderr)
		}
	})
}

// checkOutage checks a registry-outage drill of the drainkit consumer: no
// failure, a 2 s outage, the replacement after it seen with the four
// instants, and the two consumers started during it.
func checkOutage(t *testing.T, r result) {
	t.Helper()
	out := parseScenarios(t, r)
	if len(out.Strategies) != 1 {
		t.Fatalf("runs %+v, want one", out.Strategies)
	}
	if r.code != 0 {
		t.Errorf("exit %d, want 0\nstderr:\n%s", r.code, r.stderr)
	}
	checkOutageRun(t, out.Strategies[0])
}

// checkOutageRun judges one registry-outage run (see checkOutage).
func checkOutageRun(t *testing.T, run scenarioRun) {
	t.Helper()
	wantNoFailure(t, run)
	if run.OutageStart == nil || run.OutageEnd == nil || *run.OutageEnd-*run.OutageStart < 1.9 {
		t.Fatalf("outage %v..%v, want 2s", run.OutageStart, run.OutageEnd)
	}
	if len(run.Events) != 1 {
		t.Fatalf("events %+v, want the replacement after the return", run.Events)
	}
	e := run.Events[0]
	if e.Decision == nil || e.ConsumerView == nil || e.DecisionRevision == nil || *e.Decision < *run.OutageEnd {
		t.Errorf("event %+v: want the registry's decision and a consumer view after the outage (%.2fs)", e, *run.OutageEnd)
	}
	if len(run.LateConsumers) != 2 {
		t.Fatalf("late consumers %+v, want one with a snapshot and one without", run.LateConsumers)
	}
	for _, lc := range run.LateConsumers {
		if lc.Started < *run.OutageStart || lc.Started > *run.OutageEnd || lc.Requests == 0 {
			t.Errorf("late consumer %+v: want it started during the outage (%.2fs..%.2fs) and calling", lc, *run.OutageStart, *run.OutageEnd)
		}
		switch {
		case lc.Snapshot && (lc.Failed != 0 || !strings.HasSuffix(lc.Served, ".json") || lc.Age == nil || *lc.Age < 0):
			t.Errorf("the consumer with a snapshot: %+v: want the snapshot served, with its age, and no failure", lc)
		case !lc.Snapshot && (lc.Failed != lc.Requests || lc.Served != "" || !strings.Contains(lc.Error, "no instance to send the request to")):
			t.Errorf("the consumer without a snapshot: %+v: want every call failed, naming the missing view", lc)
		}
	}
	for _, want := range []string{"with a last-good snapshot served it", "without a snapshot had no view"} {
		if !strings.Contains(run.Verdict, want) {
			t.Errorf("verdict lacks %q: %s", want, run.Verdict)
		}
	}
}
