package drill

import (
	"strings"
	"testing"
	"time"
)

// TestJudgeOverload: failures before the first stop, readiness probes
// failed before their replica's stop and a pacing lag beyond the bound each
// make a drill invalid, naming the cause and what to lower; failures after
// the stop (what the drill measures) and probes failing after the stop do
// not.
func TestJudgeOverload(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Rate = 3000
	judge := func(mod func(*StrategyRun)) Validity {
		run := syntheticRun("drainkit", 5*s, 1900*time.Millisecond, 1900*time.Millisecond, 5) // failures after the stop at 2s
		mod(&run)
		res := &Result{Config: cfg, Runs: []StrategyRun{run}}
		return Judge(res, Summaries(res))
	}
	if v := judge(func(*StrategyRun) {}); !v.Valid {
		t.Fatalf("failures after the first stop made the drill invalid: %s", v.Reason)
	}
	// A request sent before the stop and cut by it (SIGKILL) fails after it.
	cut := func(r *StrategyRun) {
		r.Records = append(r.Records, Record{Start: 1900 * time.Millisecond, Sent: 1900 * time.Millisecond, End: 2001 * time.Millisecond, Replica: 1, Outcome: Reset})
	}
	if v := judge(cut); !v.Valid {
		t.Fatalf("a request cut by the stop made the drill invalid: %s", v.Reason)
	}
	if v := judge(func(r *StrategyRun) { r.ProbeFailures = []ProbeFailure{{Replica: 1, At: 3 * s}} }); !v.Valid {
		t.Fatalf("a probe failing after its replica's stop made the drill invalid: %s", v.Reason)
	}
	for name, tc := range map[string]struct {
		mod  func(*StrategyRun)
		want string
	}{
		"baseline failure": {func(r *StrategyRun) {
			r.Records = append(r.Records, Record{Start: time.Second, Sent: time.Second, End: 1500 * time.Millisecond, Outcome: Timeout, Err: "timeout"})
		}, "1 request failed (timeout 1) before any replica was stopped"},
		"probe timeout": {func(r *StrategyRun) { r.ProbeFailures = []ProbeFailure{{Replica: 2, At: 3 * s}} }, "1 readiness probe of replicas not yet stopped failed"},
		"pacing lag":    {func(r *StrategyRun) { r.MaxLag = 2500 * time.Millisecond }, "fell up to 2.5s behind its schedule"},
	} {
		v := judge(tc.mod)
		if v.Valid || !strings.Contains(v.Reason, tc.want) || !strings.Contains(v.Reason, "lower --rate (3000 now") ||
			!strings.Contains(v.Reason, "--sequential") {
			t.Errorf("%s: valid %v, reason %q; want invalid naming %q and --rate", name, v.Valid, v.Reason, tc.want)
		}
	}
}

// TestInvalidDrillBlamesNoStrategy: an invalid drill's verdicts do not
// blame the strategies, no strategy passes, and the table says INVALID.
func TestInvalidDrillBlamesNoStrategy(t *testing.T) {
	cfg := DefaultConfig()
	run := syntheticRun("shutdown", 0, 0, 1500*time.Millisecond, 5)
	run.MaxLag = 5 * s
	res := &Result{Config: cfg, Runs: []StrategyRun{run}}
	sums := Summaries(res)
	if sums[0].Pass || !strings.HasPrefix(sums[0].Verdict, "NOT JUDGED") || strings.Contains(sums[0].Verdict, "http.Server.Shutdown") {
		t.Fatalf("verdict %q", sums[0].Verdict)
	}
	var b strings.Builder
	if err := WriteTable(&b, res, sums); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "INVALID: the machine could not sustain this drill") || !strings.Contains(b.String(), "result: INVALID") {
		t.Fatalf("table:\n%s", b.String())
	}
}

// TestCapacityWarning: 3000 requests/s for three strategies on two cores is
// warned about before the drill starts; the default drill and --sequential
// at a rate the machine drives are not.
func TestCapacityWarning(t *testing.T) {
	cfg := DefaultConfig()
	if w := cfg.CapacityWarning(2); w != "" {
		t.Errorf("default drill on 2 cores: %s", w)
	}
	cfg.Rate = 3000
	if w := cfg.CapacityWarning(2); !strings.Contains(w, "9000 requests/s in all") || !strings.Contains(w, "--sequential") {
		t.Errorf("3000/s x 3 strategies on 2 cores: %q", w)
	}
	cfg.Rate, cfg.Sequential = 2000, true
	if w := cfg.CapacityWarning(2); w != "" {
		t.Errorf("--sequential at 2000/s on 2 cores: %s", w)
	}
}

// TestJudgeUnhealthyService: 5xx answers before the first stop, even a few
// at a low rate, make the drill invalid because of the service, naming the
// statuses and the request, without blaming the machine; 5xx after the stop
// are what the drill measures.
func TestJudgeUnhealthyService(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Rate, cfg.Path = 10, "/orders"
	run := syntheticRun("drainkit", 5*s, 1900*time.Millisecond, 1900*time.Millisecond, 5)
	run.Records = append(run.Records, Record{Start: 3 * s, Sent: 3 * s, End: 3 * s, Outcome: Status5xx, Err: "502 Bad Gateway"})
	if v := Judge(&Result{Config: cfg, Runs: []StrategyRun{run}}, nil); !v.Valid {
		t.Fatalf("a 5xx after the first stop made the drill invalid: %s", v.Reason)
	}
	run.Records = append(run.Records, Record{Start: s, Sent: s, End: s, Outcome: Status5xx, Err: "503 Service Unavailable"})
	v := Judge(&Result{Config: cfg, Runs: []StrategyRun{run}}, nil)
	if v.Valid || v.Cause != CauseService || !strings.Contains(v.Reason, "503 Service Unavailable 1") ||
		!strings.Contains(v.Reason, "GET /orders") || strings.Contains(v.Reason, "could not sustain") {
		t.Fatalf("valid %v, cause %q, reason %q", v.Valid, v.Cause, v.Reason)
	}
}
