package drill

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/serve"
	"github.com/drainkit/drainkit/internal/syncx"
)

// BrownoutCapacity is how many requests each replica of the built-in
// strategies serves at once in ScenarioBrownout (a fixed pool of workers,
// `serve --capacity`); a request beyond it gets 503 "over capacity". The
// three replicas' total capacity is fixed: whatever the browned-out
// replica does not serve, the others must, retries included.
const BrownoutCapacity = 64

// BrownoutTryTimeout is the drainkit consumer's per-try timeout in
// ScenarioBrownout (http.Transport.ResponseHeaderTimeout): a try that gets
// no response header within it fails as a connect-level failure, counts
// towards outlier ejection and may be retried within the retry budget.
const BrownoutTryTimeout = 500 * time.Millisecond

// brownoutHold is how long the load runs on a browned-out replica before
// the tail: long enough for every consumer to eject it.
const brownoutHold = 3 * time.Second

// brownoutLaunch gives a built-in strategy's replicas the capacity limit
// and the brownout switch (files in dir); an --exec binary has neither:
// its own capacity is what it is, and nothing can slow it down from outside.
func (s *strategyRun) brownoutLaunch(dir string) {
	if s.cfg.Exec != "" {
		return
	}
	s.blockDir = dir
	s.launch.Args = append(slices.Clip(s.launch.Args), "--capacity", strconv.Itoa(BrownoutCapacity), "--brownout-dir", dir)
}

// brownout is ScenarioBrownout: the first initial replica starts to answer
// slowly (every request waits serve.BrownoutDelay) while its readiness
// stays 200, so the discovery keeps listing it; only the consumers can
// route around it. The load runs on it for brownoutHold.
func (s *strategyRun) brownout(ctx context.Context, _ Discovery, initial []*Replica) error {
	victim := initial[0]
	s.st.set("r%d browns out", victim.ID)
	if err := s.switchOn(victim, "brownout", "browning out"); err != nil {
		return err
	}
	return syncx.Sleep(ctx, brownoutHold)
}

// BrownoutSummary is what ScenarioBrownout measured beyond the failures:
// how much the consumers amplified the load and whether the healthy
// replicas stayed within their capacity.
type BrownoutSummary struct {
	// Capacity is each built-in replica's limit of requests at once (0 for
	// an --exec binary: its own); DelaySeconds how long the browned-out
	// replica makes a request wait; TryTimeoutSeconds the drainkit
	// consumer's per-try timeout (0 for the naive consumer: it has none).
	Capacity          int     `json:"capacity_per_replica"`
	DelaySeconds      float64 `json:"brownout_delay_s"`
	TryTimeoutSeconds float64 `json:"try_timeout_s"`
	// Attempts counts the tries, retries included; Amplification is
	// Attempts / requests (1 for a consumer that never retries).
	Attempts      int     `json:"attempts"`
	Retries       int     `json:"retries"`
	Amplification float64 `json:"amplification"`
	// RetryBudget is the most retries the consumers' retry budgets allowed
	// over the load (consumer.RetryBudget's defaults: 20 % of the requests
	// plus 10 per second per consumer), null for a consumer without one;
	// BudgetHeld is false when the retries exceeded it.
	RetryBudget *int `json:"retry_budget"`
	BudgetHeld  bool `json:"retry_budget_held"`
	// BudgetDenied counts the retries the budgets refused: each is a
	// request that failed so that the load was not multiplied.
	BudgetDenied int64 `json:"retries_refused_by_budget"`
	// ShedByOthers counts the 5xx answers (503 "over capacity") of the
	// replicas that were not browned out: load pushed over their capacity;
	// ShedByVictim those of the browned-out replica.
	ShedByOthers int `json:"over_capacity_healthy"`
	ShedByVictim int `json:"over_capacity_browned_out"`
}

// brownoutFigures computes run's BrownoutSummary.
func brownoutFigures(cfg Config, run StrategyRun, requests int) *BrownoutSummary {
	b := &BrownoutSummary{DelaySeconds: serve.BrownoutDelay.Seconds(), BudgetDenied: run.BudgetDenied, BudgetHeld: true}
	if cfg.Exec == "" {
		b.Capacity = BrownoutCapacity
	}
	victims := map[int]bool{}
	for _, e := range run.Events {
		victims[e.Replica] = true
	}
	for _, r := range run.Records {
		b.Retries += r.Retries
		if r.Outcome != Status5xx {
			continue
		}
		if victims[r.Replica] {
			b.ShedByVictim++
		} else {
			b.ShedByOthers++
		}
	}
	b.Attempts = requests + b.Retries
	if requests > 0 {
		b.Amplification = float64(b.Attempts) / float64(requests)
	}
	if run.Consumer == ConsumerDrainkit {
		b.TryTimeoutSeconds = BrownoutTryTimeout.Seconds()
		load := (run.LoadEnd - run.LoadStart).Seconds()
		n := int(0.2*float64(requests) + 10*load*float64(cfg.Consumers))
		b.RetryBudget = &n
		b.BudgetHeld = b.Retries <= n
	}
	return b
}

// brownoutVerdict explains a ScenarioBrownout run.
func brownoutVerdict(cfg Config, s Summary) string {
	b := s.Brownout
	budget := 0
	if s.Budget != nil {
		budget = *s.Budget
	}
	detail := ""
	for _, e := range s.Events {
		detail += fmt.Sprintf("; r%d browned out at %.2fs (each request waits %s) with readiness 200, so the discovery kept it listed (registry decision %s); the first consumer ejection came after %s, the last request to it at %s",
			e.Replica, e.FaultSeconds, serve.BrownoutDelay, instant(e.RegistryDecisionSeconds), after(e.EjectionSeconds, e.FaultSeconds), instant(e.LastSentSeconds))
	}
	amp := fmt.Sprintf("; amplification %.3f attempts/request with the %s consumer (%d retries", b.Amplification, s.Consumer, b.Retries)
	if b.RetryBudget != nil {
		amp += fmt.Sprintf(", retry budget %d: %s; per-try timeout %s", *b.RetryBudget, map[bool]string{true: "held", false: "EXCEEDED"}[b.BudgetHeld], BrownoutTryTimeout)
	}
	amp += ")"
	capacity := "its own capacity (--exec)"
	if b.Capacity > 0 {
		capacity = fmt.Sprintf("a capacity of %d requests at once per replica", b.Capacity)
	}
	amp += fmt.Sprintf("; under %s the healthy replicas shed %d requests (503 over capacity), the browned-out one %d", capacity, b.ShedByOthers, b.ShedByVictim)
	if cfg.Exec != "" {
		amp += "; the --exec binary has no brownout switch, so only the load was rehearsed"
	}
	switch {
	case s.Pass:
		return fmt.Sprintf("PASS: %d of %d requests failed, within the budget of %d (%s)%s%s", s.Failed, s.Requests, budget, s.BudgetReason, amp, detail)
	case !b.BudgetHeld:
		return fmt.Sprintf("FAIL: the retries (%d) exceeded the retry budget (%d): the consumers multiplied the load%s%s", b.Retries, *b.RetryBudget, amp, detail)
	}
	return fmt.Sprintf("FAIL: %d of %d requests failed (%s), over the budget of %d (%s)%s%s", s.Failed, s.Requests, kindList(s.FailuresByKind), budget, s.BudgetReason, amp, detail)
}
