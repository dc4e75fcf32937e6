package drill

import (
	"strings"
	"testing"
	"time"
)

// TestBrownoutFigures: the amplification counts every retry, the 503s are
// attributed to the browned-out replica or the healthy ones, and the
// verdict fails a drainkit run whose retries exceeded the retry budget or
// whose healthy replicas shed requests.
func TestBrownoutFigures(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Consumers = 1
	run := StrategyRun{Scenario: ScenarioBrownout, Name: StrategyDrainkit, Consumer: ConsumerDrainkit,
		LoadStart: 0, LoadEnd: time.Second, Events: []Event{{Kind: "brownout", Replica: 1, Fault: 0}}}
	for i := range 100 {
		r := Record{Replica: 2 + i%2, Outcome: OK}
		if i < 5 {
			r.Retries = 1
		}
		run.Records = append(run.Records, r)
	}
	s := Summarize(cfg, run)
	b := s.Brownout
	if b == nil || b.Retries != 5 || b.Attempts != 105 || b.Amplification != 1.05 || b.RetryBudget == nil || *b.RetryBudget != 30 || !b.BudgetHeld || !s.Pass {
		t.Fatalf("figures %+v pass %v: want 5 retries of a budget of 30 (20 %% of 100 + 10/s for 1s), amplification 1.05, a pass", b, s.Pass)
	}
	if !strings.Contains(s.Verdict, "amplification 1.050") {
		t.Errorf("verdict %q does not print the amplification", s.Verdict)
	}

	for i := range 40 { // a retry storm
		run.Records[i].Retries = 2
	}
	if s := Summarize(cfg, run); s.Brownout.BudgetHeld || s.Pass || !strings.Contains(s.Verdict, "exceeded the retry budget") {
		t.Errorf("80 retries over a budget of 30: held %v, pass %v, verdict %q", s.Brownout.BudgetHeld, s.Pass, s.Verdict)
	}

	run.Records = append(run.Records, Record{Replica: 1, Outcome: Status5xx}, Record{Replica: 2, Outcome: Status5xx}, Record{Replica: 3, Outcome: Status5xx})
	for i := range 40 {
		run.Records[i].Retries = 0
	}
	s = Summarize(cfg, run)
	if s.Brownout.ShedByVictim != 1 || s.Brownout.ShedByOthers != 2 || s.Pass {
		t.Errorf("figures %+v pass %v: want 1 shed by the browned-out replica, 2 by the others, a failure", *s.Brownout, s.Pass)
	}
}
