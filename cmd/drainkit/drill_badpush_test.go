package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/registry/consul/consultest"
	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
)

// badPushJSON is the bad-push part of `drill --json`.
type badPushJSON struct {
	Strategies []struct {
		BadPush *struct {
			Duplicated        int      `json:"duplicated_answers"`
			Reordered         int      `json:"reordered_answers"`
			Empty             int      `json:"empty_answers"`
			EmptyStart        *float64 `json:"empty_answer_start_s"`
			EmptyEnd          *float64 `json:"empty_answer_end_s"`
			FailedDuringEmpty int      `json:"failed_during_empty_answer"`
			SentAfterExit     int      `json:"sent_to_drained_after_exit"`
		} `json:"bad_push"`
	} `json:"strategies"`
}

// badPushArgs: 3 replicas, readiness probes every 500 ms, one replaced
// under the proxy.
var badPushArgs = []string{"drill", "--json", "--scenario", "bad-push", "--rate", "200", "--replicas", "3",
	"--baseline", "1s", "--tail", "1s", "--discovery-interval", "500ms"}

// badPushEnv keeps the drained replica's window short: with a naive
// consumer following the stale answer, late arrivals would hold it open
// until propagation.max.
var badPushEnv = []string{"DRAINKIT_PROPAGATION_MIN=1s", "DRAINKIT_PROPAGATION_MAX=3s"}

// TestDrillScenarioBadPush: the consumers' answers come through a proxy
// that duplicates them, follows each change with the previous answer and
// once answers an empty list, while one replica is drained. The drainkit
// consumer drops the stale answer by its revision and holds its last good
// view over the empty one: nothing fails and nothing is sent to the
// drained instance after its exit. The naive consumer follows both: it
// sends to the drained instance after its exit (refused) and has no
// instance during the empty answer (the checks can fail). With the
// built-in discovery, etcd's and Consul's watches (--exec of the README
// program: TestDrillEveryScenarioOnExec).
func TestDrillScenarioBadPush(t *testing.T) {
	parallelDrill(t, 200)
	t.Run("list and usage", func(t *testing.T) {
		r := drainkit(t, 30*time.Second, nil, "drill", "--scenario", "list")
		for _, want := range []string{"\nbad-push\n", "\nzone-loss\n", "reordered", "--zone-policy"} {
			if r.code != 0 || !strings.Contains(r.stdout, want) {
				t.Errorf("exit %d: --scenario list lacks %q:\n%s", r.code, want, r.stdout)
			}
		}
		r = drainkit(t, 30*time.Second, nil, "drill", "--scenario", "bad-push", "--nacos", "127.0.0.1:8848")
		if r.code != 2 || !strings.Contains(r.stderr, "not with --nacos") {
			t.Errorf("bad-push --nacos: exit %d, stderr %q: want 2 refusing --nacos", r.code, r.stderr)
		}
	})
	t.Run("built-in drainkit consumer", func(t *testing.T) {
		report := filepath.Join(t.TempDir(), "badpush.html")
		r := drainkit(t, 2*time.Minute, badPushEnv, append(badPushArgs, "--consumer", "drainkit", "--report", report)...)
		checkBadPushPass(t, r)
		t.Run("report renders in chromium", func(t *testing.T) {
			errs, dom := pageErrors(t, report)
			if len(errs) > 0 {
				t.Errorf("console errors in the report:\n%s", strings.Join(errs, "\n"))
			}
			for _, want := range []string{"Scenario bad-push", "registry decision", "first consumer view without", "last request to old address", "reordered"} {
				if !strings.Contains(dom, want) {
					t.Errorf("the rendered report lacks %q", want)
				}
			}
		})
	})
	t.Run("built-in naive consumer", func(t *testing.T) {
		checkBadPushFail(t, drainkit(t, 2*time.Minute, badPushEnv, append(badPushArgs, "--consumer", "naive")...))
	})
	t.Run("etcd", func(t *testing.T) {
		s := etcdtest.Start(t)
		args := append(badPushArgs, "--etcd", s.Endpoint)
		t.Run("drainkit consumer", func(t *testing.T) {
			checkBadPushPass(t, drainkit(t, 2*time.Minute, badPushEnv, append(args, "--consumer", "drainkit")...))
		})
		t.Run("naive consumer", func(t *testing.T) {
			checkBadPushFail(t, drainkit(t, 2*time.Minute, badPushEnv, append(args, "--consumer", "naive")...))
		})
	})
	t.Run("consul", func(t *testing.T) {
		agent := consultest.Start(t)
		checkBadPushPass(t, drainkit(t, 2*time.Minute, badPushEnv, append(badPushArgs, "--consul", agent.HTTPAddr, "--consumer", "drainkit")...))
	})
}

// checkBadPush checks the shape of a bad-push drill: one run, one drain
// with its four instants, and what the proxy did: duplicates, at least one
// reordered answer and one empty one.
func checkBadPush(t *testing.T, r result) (scenarioRun, badPushJSON) {
	t.Helper()
	out := parseScenarios(t, r)
	var bp badPushJSON
	if err := json.Unmarshal([]byte(r.stdout), &bp); err != nil {
		t.Fatal(err)
	}
	if len(out.Strategies) != 1 || out.Strategies[0].Scenario != "bad-push" || len(bp.Strategies) != 1 || bp.Strategies[0].BadPush == nil {
		t.Fatalf("runs %+v, want one bad-push run with the proxy's counts\nstdout:\n%s", out.Strategies, r.stdout)
	}
	s, b := out.Strategies[0], bp.Strategies[0].BadPush
	t.Logf("proxy: %+v", *b)
	if b.Duplicated < 3 || b.Reordered < 1 || b.Empty != 1 || b.EmptyStart == nil || b.EmptyEnd == nil || *b.EmptyEnd-*b.EmptyStart < 0.9 {
		t.Errorf("proxy %+v: want duplicated answers, a reordered one and one empty answer of 1s", *b)
	}
	if len(s.Events) != 1 {
		t.Fatalf("events %+v, want the drain of one replica", s.Events)
	}
	e := s.Events[0]
	// The last request to the old address is checked by the callers: a
	// registry deregisters at the fault, and a consumer that follows it
	// sends nothing after it.
	if e.Decision == nil || e.ConsumerView == nil || e.DecisionRevision == nil || e.ConsumerRevision == nil || *e.Decision < e.Fault {
		t.Errorf("event %+v: want the registry's decision and the first consumer view with revisions, the decision after the fault", e)
	}
	return s, bp
}

// checkBadPushPass checks a drill whose consumer must pass: nothing failed,
// nothing sent to the drained instance after its exit, exit 0.
func checkBadPushPass(t *testing.T, r result) scenarioRun {
	t.Helper()
	s, bp := checkBadPush(t, r)
	b := bp.Strategies[0].BadPush
	if r.code != 0 || !s.Pass || s.Failed != 0 || b.SentAfterExit != 0 || b.FailedDuringEmpty != 0 {
		t.Errorf("exit %d: %d failed %v, %d sent to the drained instance after its exit, %d failed during the empty answer: want none\nstderr:\n%s",
			r.code, s.Failed, s.Kinds, b.SentAfterExit, b.FailedDuringEmpty, r.stderr)
	}
	if e := s.Events[0]; e.LastSent != nil && e.Decision != nil && *e.LastSent > *e.Decision+1 {
		t.Errorf("event %+v: the last request to the drained instance came long after the registry's decision", e)
	}
	return s
}

// checkBadPushFail checks a drill whose naive consumer follows the proxy:
// requests refused by the drained instance after its exit and requests
// with no instance during the empty answer, exit 1.
func checkBadPushFail(t *testing.T, r result) {
	t.Helper()
	s, bp := checkBadPush(t, r)
	b := bp.Strategies[0].BadPush
	if r.code != 1 || s.Pass || b.SentAfterExit == 0 || b.FailedDuringEmpty == 0 || s.Kinds["no_endpoint"] == 0 || s.Kinds["refused"] == 0 {
		t.Errorf("exit %d: %d failed %v, %d sent to the drained instance after its exit, %d failed during the empty answer: want refused and no_endpoint failures and exit 1",
			r.code, s.Failed, s.Kinds, b.SentAfterExit, b.FailedDuringEmpty)
	}
	if e := s.Events[0]; e.LastSent == nil || e.Decision == nil || *e.LastSent < *e.Decision+0.5 {
		t.Errorf("event %+v: want requests sent to the drained instance long after the registry's decision", e)
	}
	if !strings.Contains(s.Verdict, "reordered") || !strings.Contains(s.Verdict, "empty answer") {
		t.Errorf("verdict %q: want what the proxy did and why it failed", s.Verdict)
	}
}
