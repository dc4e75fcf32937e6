package drill

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

const s = time.Second

// syntheticRun is one replica replaced at 2s with a drain timeline whose
// window closed at closeAt; consumers sent to it until lastSent after SIGTERM
// and the failures are refused requests after the listener closed.
func syntheticRun(name string, closeAt, lastLate, lastSent time.Duration, failed int) StrategyRun {
	run := StrategyRun{Name: name, Duration: 10 * s}
	for i := range 100 {
		run.Records = append(run.Records, Record{Start: time.Duration(i) * 20 * time.Millisecond, Sent: time.Duration(i) * 20 * time.Millisecond, Replica: 1, Outcome: OK})
	}
	run.Records = append(run.Records, Record{Start: 2*s + lastSent, Sent: 2*s + lastSent, Replica: 1, Outcome: OK})
	for i := range failed {
		run.Records = append(run.Records, Record{Start: 2*s + closeAt + time.Duration(i)*time.Millisecond, Replica: 1, Outcome: Refused, Err: "connect: connection refused"})
	}
	run.Replicas = []ReplicaReport{
		{ID: 1, Role: RoleInitial, Started: 0, Ready: 100 * time.Millisecond, Signalled: 2 * s, Exited: 2*s + closeAt + 10*time.Millisecond, Rolled: true,
			T0: 2 * s, Timeline: &ReplicaTimeline{LateArrivals: 40, LastLateArrival: lastLate,
				Steps: map[string]time.Duration{"not_ready": 0, "window_ended": closeAt, "listeners_closed": closeAt}}},
		{ID: 2, Role: RoleReplacement, Started: s, Ready: 1100 * time.Millisecond, Signalled: 9 * s, Exited: 9*s + 500*time.Millisecond},
	}
	return run
}

func TestSummarizeWindowShorterThanStaleness(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Timings.PropagationMin, cfg.Timings.PropagationMax = s, s
	// Late arrivals until 0.99s, the listener closed at 1s (max), consumers
	// kept sending for 4s.
	sum := Summarize(cfg, syntheticRun("drainkit", s, 990*time.Millisecond, 4*s, 30))
	if sum.Pass || sum.Failed != 30 || sum.FailuresByKind["refused"] != 30 {
		t.Fatalf("summary %+v", sum)
	}
	for _, want := range []string{"FAIL", "shorter than the consumers' staleness", "late arrivals until 0.99s", "r1", "kept sending for 4.00s", "closed at 1.00s"} {
		if !strings.Contains(sum.Verdict, want) {
			t.Errorf("verdict lacks %q: %s", want, sum.Verdict)
		}
	}
	if len(sum.DrainSeconds) != 1 || sum.DrainSeconds[0] != 1.01 {
		t.Fatalf("drain seconds %v: only the rolled replica counts", sum.DrainSeconds)
	}
	if sum.LateRequests != 40 || sum.LateReportedBy != 1 || sum.StalenessSeconds != 4 {
		t.Fatalf("late %d by %d, staleness %v", sum.LateRequests, sum.LateReportedBy, sum.StalenessSeconds)
	}
}

func TestSummarizePass(t *testing.T) {
	cfg := DefaultConfig()
	sum := Summarize(cfg, syntheticRun("drainkit", 5*s, 1900*time.Millisecond, 1900*time.Millisecond, 0))
	if !sum.Pass || !strings.HasPrefix(sum.Verdict, "PASS: 0 of 101") {
		t.Fatalf("verdict %q", sum.Verdict)
	}
}

func TestSummarizeBuiltinVerdicts(t *testing.T) {
	cfg := DefaultConfig()
	sh := syntheticRun("shutdown", 0, 0, 1500*time.Millisecond, 5)
	if v := Summarize(cfg, sh).Verdict; !strings.Contains(v, "http.Server.Shutdown closed the listener at SIGTERM") {
		t.Fatalf("shutdown verdict %q", v)
	}
	ex := syntheticRun("exit", 0, 0, 1500*time.Millisecond, 5)
	ex.Replicas[0].Timeline = nil
	sum := Summarize(cfg, ex)
	if !strings.Contains(sum.Verdict, "the process died at SIGTERM") || sum.LateReportedBy != 0 {
		t.Fatalf("exit summary %+v", sum)
	}
}

func TestPassedGatesOnDrainkit(t *testing.T) {
	cfg := DefaultConfig()
	res := &Result{Config: cfg}
	sums := []Summary{{Name: "drainkit", Pass: true}, {Name: "shutdown", Pass: false}, {Name: "exit", Pass: false}}
	if !Passed(res, sums) {
		t.Fatal("drainkit passed: the drill passes whatever the other strategies did")
	}
	sums[0].Pass = false
	if Passed(res, sums) {
		t.Fatal("drainkit failed: the drill must fail")
	}
	res.Config.Strategies = []string{"shutdown"}
	if Passed(res, []Summary{{Name: "shutdown", Pass: false}}) {
		t.Fatal("without drainkit every strategy gates")
	}
}

func TestReportsRender(t *testing.T) {
	cfg := DefaultConfig()
	res := &Result{Config: cfg, Wall: 20 * s, Runs: []StrategyRun{
		syntheticRun("drainkit", 5*s, 1900*time.Millisecond, 1900*time.Millisecond, 0),
		syntheticRun("shutdown", 0, 0, 1500*time.Millisecond, 5),
	}}
	sums := Summaries(res)

	var js bytes.Buffer
	if err := WriteJSON(&js, res, sums); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Strategies []struct {
			Name           string         `json:"name"`
			Requests       int            `json:"requests"`
			Failed         int            `json:"failed"`
			FailuresByKind map[string]int `json:"failures_by_kind"`
			DrainSeconds   []float64      `json:"drain_seconds"`
			LateRequests   *int64         `json:"late_requests"`
		} `json:"strategies"`
		Config map[string]any `json:"config"`
	}
	if err := json.Unmarshal(js.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Strategies) != 2 || out.Strategies[1].Failed != 5 || out.Strategies[1].FailuresByKind["refused"] != 5 ||
		out.Strategies[0].LateRequests == nil || out.Config["timings"] == nil {
		t.Fatalf("JSON: %s", js.String())
	}

	var tbl bytes.Buffer
	if err := WriteTable(&tbl, res, sums); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"STRATEGY", "drainkit", "refused 5", "propagation.min=5s", "result: PASS"} {
		if !strings.Contains(tbl.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tbl.String())
		}
	}

	var page bytes.Buffer
	if err := WriteHTML(&page, res, sums); err != nil {
		t.Fatal(err)
	}
	html := page.String()
	if n := strings.Count(html, "<svg"); n != 2 {
		t.Fatalf("%d charts, want 2", n)
	}
	for _, bad := range []string{"<script", "<?xml", "<link", "src=\"http", "href=\"http", "url(http", "@import"} {
		if strings.Contains(html, bad) {
			t.Errorf("report contains %q: not self-contained", bad)
		}
	}
	for _, want := range []string{"Content-Security-Policy", "default-src 'none'", "requests per 100 ms", "listeners closed", "SIGTERM"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}
