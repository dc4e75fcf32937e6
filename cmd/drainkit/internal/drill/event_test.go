package drill

import (
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
)

// TestSummarizeEventsBinsFailuresFromTheFault: failures count in whole
// seconds from the fault up to the second of the last instant; failures
// before the fault or after that second do not count, and an instant that
// did not happen is null.
func TestSummarizeEventsBinsFailuresFromTheFault(t *testing.T) {
	const s = time.Second
	fix := newRunFixture(ScenarioKill, StrategyDrainkit).
		event("SIGKILL", 1, 2*s, func(e *Event) {
			e.Decision, e.DecisionRevision = 3500*time.Millisecond, 7
			e.ConsumerView, e.ConsumerRevision = 3600*time.Millisecond, 7
			e.LastSent = 3400 * time.Millisecond
		}).
		requests(1, Refused, "connect: connection refused", 1900*time.Millisecond, 2*s, 2500*time.Millisecond, 3100*time.Millisecond, 4100*time.Millisecond).
		requests(2, OK, "", 2200*time.Millisecond)
	run := fix.Run
	got := summarizeEvents(run)
	if len(got) != 1 {
		t.Fatalf("%d events", len(got))
	}
	e := got[0]
	if want := []int{2, 1}; len(e.FailuresPerSecond) != 2 || e.FailuresPerSecond[0] != want[0] || e.FailuresPerSecond[1] != want[1] || e.Failed != 3 {
		t.Errorf("failures per second %v (%d), want %v (3)", e.FailuresPerSecond, e.Failed, want)
	}
	if e.EjectionSeconds != nil || e.RegistryDecisionSeconds == nil || *e.RegistryDecisionSeconds != 3.5 || *e.RegistryRevision != 7 {
		t.Errorf("event %+v", e)
	}
	if got := revisioned(e.ConsumerViewSeconds, e.ConsumerRevision); got != "3.60 (rev 7)" {
		t.Errorf("revisioned %q", got)
	}
}

// TestFeedDropped: the registry's decision is the first answer at or after
// the fault that lacks the replica, with that answer's revision.
func TestFeedDropped(t *testing.T) {
	f := newViewFeed("svc", "test")
	publish := func(rev uint64, ids ...int) {
		f.mu.Lock()
		defer f.mu.Unlock()
		v := f.view
		v.Revision = rev
		eps := make([]Endpoint, len(ids))
		for i, id := range ids {
			eps[i] = Endpoint{Replica: id}
		}
		f.setLocked(v, eps)
	}
	publish(1, 2)
	fault := time.Now()
	publish(2, 1, 2)
	publish(3, 2)
	publish(4, 1, 2)
	at, rev, ok := f.answered(1, fault, false)
	if !ok || rev != 3 || at.Before(fault) {
		t.Errorf("dropped: %v rev %d ok %v, want the revision-3 answer", at, rev, ok)
	}
	if _, _, ok := f.answered(2, fault, false); ok {
		t.Errorf("replica 2 was never dropped")
	}
}

// TestScenarioListDescribesEvery: --scenario list names each scenario.
func TestScenarioListDescribesEvery(t *testing.T) {
	var b strings.Builder
	if err := WriteScenarioList(&b); err != nil {
		t.Fatal(err)
	}
	for _, sc := range Scenarios {
		if !strings.Contains(b.String(), "\n"+sc.Name+"\n  ") || sc.Description == "" || sc.inflict == nil {
			t.Errorf("scenario %q is not described or does nothing", sc.Name)
		}
	}
}

// TestSlowProbeVerdictCanFail: an instance the discovery dropped later than
// the checks' settings allow, or never, fails the slow-probe scenario.
func TestSlowProbeVerdictCanFail(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Checks = lifecycle.CheckOptions{Interval: 500 * time.Millisecond, Timeout: 300 * time.Millisecond, FailureThreshold: 2, SuccessThreshold: 3}
	fix := newRunFixture(ScenarioSlowProbe, StrategyDrainkit).requests(2, OK, "", 0).event("check blocks", 1, time.Second, nil)
	run := fix.Run
	if s := Summarize(cfg, run); s.Pass || !strings.HasPrefix(s.Verdict, "FAIL: the instance was not dropped in time") {
		t.Errorf("never dropped: pass %v, verdict %q", s.Pass, s.Verdict)
	}
	run.Events[0].Decision = time.Second + cfg.ejectionBound() + time.Second
	if s := Summarize(cfg, run); s.Pass {
		t.Errorf("dropped late: pass, verdict %q", s.Verdict)
	}
	run.Events[0].Decision = 2 * time.Second
	if s := Summarize(cfg, run); !s.Pass {
		t.Errorf("dropped in time: verdict %q", s.Verdict)
	}
}
