package main

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/drill"
	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
)

// scenarioCase is the shared fixture of the scenario tests: how to drill one
// scenario with the drainkit consumer and what a passing run shows. A test
// runs it with drill (the JSON parsed into scenarioRun) and judges the run
// with its check; scenarioCases holds one per scenario, and
// TestDrillEveryScenarioOnExec runs each of drill.Scenarios from it, so a
// new scenario adds its entry there.
type scenarioCase struct {
	// args are the drill's flags beyond --json, --scenario and --consumer.
	args []string
	// env is the drill's extra environment (the replicas inherit it).
	env []string
	// setup returns flags that need a resource of the test's own (a
	// registry started for it); nil for none.
	setup func(t *testing.T) []string
	// exec returns the --exec flags of a scenario the README program cannot
	// run (it registers nowhere); nil means the README program.
	exec func(t *testing.T) []string
	// check judges a run beyond parseScenarios' shape checks.
	check func(t *testing.T, s scenarioRun)
}

// eventInstants are the legend labels of the four instants on the HTML
// timeline (drill's chart).
var eventInstants = []string{"fault", "registry decision", "first consumer view without", "last request to old address (start: first to new)"}

// scenarioCases are the scenarios' fixtures, by name; short runs (1 s
// baseline and tail) that fit the 2-core CI with --sequential.
var scenarioCases = map[string]scenarioCase{
	drill.ScenarioWarmup: {
		args:  []string{"--rate", "200", "--replicas", "2", "--baseline", "1s", "--tail", "1s", "--discovery-interval", "500ms", "--warmup", "2s"},
		env:   shortEnv,
		check: func(t *testing.T, s scenarioRun) { wantNoFailure(t, s); checkStart(t, s) },
	},
	drill.ScenarioRolling: {
		args: []string{"--rate", "200", "--replicas", "2", "--baseline", "1s", "--tail", "1s", "--discovery-interval", "500ms"},
		env:  shortEnv,
		check: func(t *testing.T, s scenarioRun) {
			wantNoFailure(t, s)
			wantEvents(t, s, "SIGTERM", 2)
			for _, e := range s.Events {
				if e.Decision == nil || e.ConsumerView == nil {
					t.Errorf("event %+v: want the registry's decision and the first consumer view without it", e)
				}
			}
		},
	},
	drill.ScenarioKill: {
		args:  killArgs[4:], // after drill --json --scenario kill
		env:   shortEnv,
		check: func(t *testing.T, s scenarioRun) { wantWithinBudget(t, s); wantEvents(t, s, "SIGKILL", 1) },
	},
	drill.ScenarioSlowProbe: {
		args: []string{"--rate", "200", "--replicas", "3", "--baseline", "1s", "--tail", "1s", "--discovery-interval", "500ms"},
		env:  checksEnv,
		// The README program has no check the drill can block: the replica
		// is never dropped, so only the fault and its requests happen.
		check: func(t *testing.T, s scenarioRun) { wantNoFailure(t, s); wantEvents(t, s, "check blocks", 1) },
	},
	drill.ScenarioOutage: {
		args: []string{"--outage", "2s", "--rate", "200", "--replicas", "2", "--baseline", "1s", "--tail", "1s"},
		env:  []string{"DRAINKIT_PROPAGATION_MIN=2s"},
		setup: func(t *testing.T) []string {
			return []string{"--etcd", etcdtest.Start(t).Endpoint}
		},
		// The README program registers nowhere (examples/minimal refuses a
		// registry setting), so the outage drills drainkit's own service mode,
		// which registers in etcd.
		exec: func(*testing.T) []string {
			return []string{"--exec", binary, "--exec-arg", "serve", "--exec-arg", "--strategy=drainkit"}
		},
		check: checkOutageRun,
	},
	drill.ScenarioBadPush: {
		args: badPushArgs[4:], // after drill --json --scenario bad-push
		env:  badPushEnv,
		check: func(t *testing.T, s scenarioRun) {
			wantNoFailure(t, s)
			if len(s.Events) != 1 || s.Events[0].Decision == nil || s.Events[0].ConsumerView == nil {
				t.Errorf("events %+v: want the drain of one replica with the registry's decision and a consumer view", s.Events)
			}
		},
	},
	drill.ScenarioZoneLoss: {
		args:  zoneLossArgs[4:], // after drill --json --scenario zone-loss
		env:   shortEnv,
		check: func(t *testing.T, s scenarioRun) { wantWithinBudget(t, s); wantEvents(t, s, "SIGKILL", 2) },
	},
	drill.ScenarioBrownout: {
		args: brownoutArgs[4:], // after drill --json --scenario brownout
		env:  shortEnv,
		// The README program has no brownout switch: only the load runs.
		check: func(t *testing.T, s scenarioRun) { wantNoFailure(t, s); wantEvents(t, s, "brownout", 1) },
	},
	drill.ScenarioLongLived: {
		args: longLivedArgs[4:], // after drill --json --scenario long-lived
		env:  shortEnv,
		// The README program serves no GET /events: drainkit's own service
		// mode does.
		exec: func(*testing.T) []string {
			return []string{"--exec", binary, "--exec-arg", "serve", "--exec-arg", "--strategy=drainkit"}
		},
		check: func(t *testing.T, s scenarioRun) { wantNoFailure(t, s); wantEvents(t, s, "SIGTERM", 3) },
	},
}

// drill runs scenario name as c says, with the drainkit consumer and
// extra flags, and returns the parsed JSON and the run.
func (c scenarioCase) drill(t *testing.T, name string, extra ...string) (scenarioJSON, result) {
	t.Helper()
	args := append([]string{"drill", "--json", "--scenario", name, "--consumer", "drainkit"}, c.args...)
	if c.setup != nil {
		args = append(args, c.setup(t)...)
	}
	r := drainkit(t, 3*time.Minute, c.env, append(args, extra...)...)
	return parseScenarios(t, r), r
}

// execFlags returns the --exec flags of the case: the README program
// (examples/minimal, the same text) unless the case says otherwise.
func (c scenarioCase) execFlags(t *testing.T) []string {
	if c.exec != nil {
		return c.exec(t)
	}
	return []string{"--exec", minimalBin}
}

// instantMarks returns the legend labels of the instants that happened in
// run (the JSON's non-null instants): what its HTML timeline must mark.
func instantMarks(run scenarioRun) []string {
	var marks []string
	add := func(label string, happened bool) {
		if happened && !slices.Contains(marks, label) {
			marks = append(marks, label)
		}
	}
	for _, e := range run.Events {
		add(eventInstants[0], true)
		add(eventInstants[1], e.Decision != nil)
		add(eventInstants[2], e.ConsumerView != nil)
		add(eventInstants[3], e.LastSent != nil || e.Added && e.FirstSent != nil)
	}
	return marks
}

// wantNoFailure: the run passed with no failed request.
func wantNoFailure(t *testing.T, s scenarioRun) {
	t.Helper()
	if !s.Pass || s.Failed != 0 {
		t.Errorf("%s/%s: %d of %d failed %v, pass %v: want none\n  %s", s.Scenario, s.Name, s.Failed, s.Requests, s.Kinds, s.Pass, s.Verdict)
	}
}

// wantWithinBudget: the run passed with its failures within the printed
// budget.
func wantWithinBudget(t *testing.T, s scenarioRun) {
	t.Helper()
	if s.Budget == nil || !s.Pass || s.Failed > *s.Budget {
		t.Errorf("%s/%s: %d failed, budget %v, pass %v: want within the budget\n  %s", s.Scenario, s.Name, s.Failed, s.Budget, s.Pass, s.Verdict)
	}
}

// wantEvents: n faults of kind, each with its fault instant and a last
// request to the old address.
func wantEvents(t *testing.T, s scenarioRun, kind string, n int) {
	t.Helper()
	if len(s.Events) != n {
		t.Fatalf("%s/%s: events %+v, want %d %s", s.Scenario, s.Name, s.Events, n, kind)
	}
	for _, e := range s.Events {
		if e.Kind != kind || e.Fault <= 0 {
			t.Errorf("%s/%s: event %+v, want a %s", s.Scenario, s.Name, e, kind)
		}
	}
}

// sigkillRow is a replica table's signal cell of a killed replica.
var sigkillRow = regexp.MustCompile(`<td>\d+\.\d\d SIGKILL</td>`)

// legendRe finds the labels of an SVG chart's text.
var legendRe = regexp.MustCompile(`<text[^>]*>([^<]*)</text>`)

// checkInstantMarks loads report in headless Chromium and checks, for each
// of runs (drill --json's runs of the drill that wrote it), that its
// section's timeline marks every instant that happened (instantMarks; the
// chart's legend lists only the instants it drew) and that its events table
// is there; a kill run's killed replica is marked and listed as SIGKILL. It
// returns the rendered DOM.
func checkInstantMarks(t *testing.T, report string, runs []scenarioRun) string {
	t.Helper()
	errs, dom := pageErrors(t, report)
	if len(errs) > 0 {
		t.Errorf("console errors in the report:\n%s", strings.Join(errs, "\n"))
	}
	for _, run := range runs {
		name := run.Scenario + " · strategy " + run.Name
		_, sec, ok := strings.Cut(dom, "<h2>Scenario "+name+"</h2>")
		if !ok {
			t.Errorf("the rendered report has no section %q", name)
			continue
		}
		sec, _, _ = strings.Cut(sec, "<h2>")
		var labels []string
		for _, m := range legendRe.FindAllStringSubmatch(sec, -1) {
			labels = append(labels, m[1])
		}
		marks := instantMarks(run)
		if len(marks) == 0 {
			t.Errorf("%s: no instant happened: events %+v", name, run.Events)
		}
		for _, want := range marks {
			if !slices.Contains(labels, want) {
				t.Errorf("%s: the timeline does not mark %q (its labels: %q)", name, want, labels)
			}
		}
		if !strings.Contains(sec, `<table class="events">`) {
			t.Errorf("%s: no events table", name)
		}
		if run.Scenario == drill.ScenarioKill && (!slices.Contains(labels, "SIGKILL") || !sigkillRow.MatchString(sec)) {
			t.Errorf("%s: the killed replica is not marked and listed as SIGKILL", name)
		}
	}
	return dom
}

// TestDrillEveryScenarioOnExec: every scenario of drill.Scenarios runs on
// --exec of the README program (registry-outage on a registering program:
// see its case) with the drainkit consumer, one strategy at a time: no
// failure for warmup, rolling, registry-outage and slow-probe, kill within
// its budget; and each run's HTML report, rendered in Chromium, marks the
// scenario's instants on its timeline.
func TestDrillEveryScenarioOnExec(t *testing.T) {
	parallelDrill(t, 200)
	for _, sc := range drill.Scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			c, ok := scenarioCases[sc.Name]
			if !ok {
				t.Fatalf("scenario %q has no scenarioCases entry (scenario_fixture_test.go): add one", sc.Name)
			}
			report := filepath.Join(t.TempDir(), sc.Name+".html")
			out, r := c.drill(t, sc.Name, append(c.execFlags(t), "--sequential", "--report", report)...)
			if len(out.Strategies) != 1 {
				t.Fatalf("runs %+v, want one (the --exec binary)", out.Strategies)
			}
			if r.code != 0 {
				t.Errorf("exit %d, want 0\nstderr:\n%s", r.code, r.stderr)
			}
			c.check(t, out.Strategies[0])
			checkInstantMarks(t, report, out.Strategies)
		})
	}
}
