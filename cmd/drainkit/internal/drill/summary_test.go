package drill

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"
)

const s = time.Second

// syntheticRun is one replica replaced at 2s with a drain timeline whose
// window closed at closeAt; consumers sent to it until lastSent after SIGTERM
// and the failures are refused requests after the listener closed.
func syntheticRun(name string, closeAt, lastLate, lastSent time.Duration, failed int) StrategyRun {
	run := StrategyRun{Name: name, Duration: 10 * s, LoadStart: 0, LoadEnd: 9 * s}
	for i := range 100 {
		run.Records = append(run.Records, Record{Start: time.Duration(i) * 20 * time.Millisecond, Sent: time.Duration(i) * 20 * time.Millisecond, Replica: 1, Outcome: OK})
	}
	run.Records = append(run.Records, Record{Start: 2*s + lastSent, Sent: 2*s + lastSent, Replica: 1, Outcome: OK})
	for i := range failed {
		run.Records = append(run.Records, Record{Start: 2*s + closeAt + time.Duration(i)*time.Millisecond, Sent: 2*s + closeAt + time.Duration(i)*time.Millisecond, End: 2*s + closeAt + time.Duration(i)*time.Millisecond, Replica: 1, Outcome: Refused, Err: "connect: connection refused"})
	}
	run.Replicas = []ReplicaReport{
		{ID: 1, Role: RoleInitial, Started: 0, Ready: 100 * time.Millisecond, Signalled: 2 * s, PreStop: -1, Exited: 2*s + closeAt + 10*time.Millisecond, Rolled: true,
			T0: 2 * s, Timeline: &ReplicaTimeline{LateArrivals: 40, LastLateArrival: lastLate,
				Steps: map[string]time.Duration{"not_ready": 0, "window_ended": closeAt, "listeners_closed": closeAt}}},
		{ID: 2, Role: RoleReplacement, Started: s, Ready: 1100 * time.Millisecond, Signalled: 9 * s, PreStop: -1, Exited: 9*s + 500*time.Millisecond},
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
	for _, want := range []string{"FAIL", "shorter than the consumers' staleness", "late arrivals until 0.99s", "r1", "kept sending for up to 4.00s", "closed at 1.00s"} {
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

// TestSummarizeUncleanExitFails: a drainkit replica that exited 1 (something
// force-closed) or was killed fails the drill although no request failed.
func TestSummarizeUncleanExitFails(t *testing.T) {
	cfg := DefaultConfig()
	run := syntheticRun("drainkit", 5*s, 1900*time.Millisecond, 1900*time.Millisecond, 0)
	run.Replicas[0].ExitCode, run.Replicas[0].ExitStatus = 1, "exit status 1"
	sum := Summarize(cfg, run)
	if sum.Pass || !strings.HasPrefix(sum.Verdict, "FAIL: no request failed, but r1 (exit status 1)") || len(sum.UncleanExits) != 1 {
		t.Fatalf("pass %v, verdict %q, unclean %v", sum.Pass, sum.Verdict, sum.UncleanExits)
	}
	// The baselines are judged by their requests only: dying at SIGTERM is
	// what the exit strategy is.
	run.Name = "exit"
	if sum := Summarize(cfg, run); len(sum.UncleanExits) != 0 {
		t.Fatalf("exit strategy: unclean %v", sum.UncleanExits)
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
			DrainSeconds   []float64      `json:"drain_s"`
			LateRequests   *int64         `json:"late_requests"`
		} `json:"strategies"`
		Config map[string]any `json:"config"`
	}
	if err := json.Unmarshal(js.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Strategies) != 2 || out.Strategies[1].Failed != 5 || out.Strategies[1].FailuresByKind["refused"] != 5 ||
		out.Strategies[0].LateRequests == nil || out.Config["timings_s"] == nil {
		t.Fatalf("JSON: %s", js.String())
	}
	checkJSONUnits(t, js.Bytes())

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
	if n := strings.Count(html, "<svg"); n != 3 {
		t.Fatalf("%d charts, want the comparison and one per strategy", n)
	}
	for _, bad := range []string{"<script", "<?xml", "<link", "src=\"http", "href=\"http", "url(http", "@import"} {
		if strings.Contains(html, bad) {
			t.Errorf("report contains %q: not self-contained", bad)
		}
	}
	if c, cfgAt := strings.Index(html, "failed requests per second, every strategy"), strings.Index(html, "<h2>Configuration"); c < 0 || c > cfgAt {
		t.Errorf("the comparison chart is not at the top (at %d, configuration at %d)", c, cfgAt)
	}
	for _, want := range []string{"Content-Security-Policy", "default-src 'none'", "requests per second", "listeners closed", "SIGTERM"} {
		if !strings.Contains(html, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

// TestSummarizeSaysWhenStalenessIsCut: a replaced replica that a consumer
// still listed when the load stopped makes the staleness a lower bound, and
// the verdict says so instead of presenting the cut figure as measured.
func TestSummarizeSaysWhenStalenessIsCut(t *testing.T) {
	cfg := DefaultConfig()
	run := syntheticRun("shutdown", 0, 0, 1500*time.Millisecond, 5)
	measured := Summarize(cfg, run)
	if measured.StalenessCut || strings.Contains(measured.Verdict, "cut short") || !strings.Contains(measured.Verdict, "for up to 1.50s after SIGTERM") {
		t.Fatalf("measured to its end: %+v", measured)
	}
	run.StillListed = []int{1}
	cut := Summarize(cfg, run)
	if !cut.StalenessCut || len(cut.StillListed) != 1 || !cut.Replicas[0].StillListed {
		t.Fatalf("cut: %+v", cut)
	}
	for _, want := range []string{"for at least 1.50s after SIGTERM", "cut short", "still listed r1 when the load stopped at 9.00s", "lower bounds", "--tail"} {
		if !strings.Contains(cut.Verdict, want) {
			t.Errorf("verdict lacks %q: %s", want, cut.Verdict)
		}
	}
}

func TestVerdictPluralisation(t *testing.T) {
	cfg := DefaultConfig()
	run := syntheticRun("drainkit", 5*s, 1900*time.Millisecond, 1900*time.Millisecond, 0)
	run.Replicas[0].Timeline.LateArrivals = 1
	run.LateSends = 1
	sums := []Summary{Summarize(cfg, run)}
	if v := sums[0].Verdict; !strings.Contains(v, "(1 late arrival)") {
		t.Errorf("verdict %q", v)
	}
	var tbl bytes.Buffer
	if err := WriteTable(&tbl, &Result{Config: cfg, Runs: []StrategyRun{run}}, sums); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(tbl.String(), "note: 1 request was sent more than 20 ms behind schedule") {
		t.Errorf("table:\n%s", tbl.String())
	}
}

// TestSummarizePreStop: with --prestop the drain and the staleness count
// from the preStop call, and failed calls are reported.
func TestSummarizePreStop(t *testing.T) {
	cfg := DefaultConfig()
	cfg.PreStop = true
	run := syntheticRun("drainkit", 5*s, 1900*time.Millisecond, 1900*time.Millisecond, 0)
	rp := &run.Replicas[0]
	// preStop at 1.5s took 5s; SIGTERM at 6.5s; exit at 7.01s.
	rp.PreStop, rp.PreStopTook, rp.Signalled, rp.Exited, rp.T0 = 1500*time.Millisecond, 5*s, 6500*time.Millisecond, 7010*time.Millisecond, 1500*time.Millisecond
	sum := Summarize(cfg, run)
	if sum.PreStopCalls != 1 || sum.PreStopFailed != 0 || sum.PreStopMedianSeconds != 5 {
		t.Fatalf("preStop %d calls, %d failed, median %v", sum.PreStopCalls, sum.PreStopFailed, sum.PreStopMedianSeconds)
	}
	if len(sum.DrainSeconds) != 1 || sum.DrainSeconds[0] != 5.51 {
		t.Fatalf("drain %v, want 5.51s from the preStop call", sum.DrainSeconds)
	}
	if sum.StalenessSeconds != 2.4 || !strings.Contains(sum.Verdict, "after the preStop call") {
		t.Fatalf("staleness %v, verdict %q: want 2.40s from the preStop call", sum.StalenessSeconds, sum.Verdict)
	}
	rp.PreStopErr = "404 Not Found: 404 page not found"
	sums := []Summary{Summarize(cfg, run)}
	var tbl bytes.Buffer
	if err := WriteTable(&tbl, &Result{Config: cfg, Runs: []StrategyRun{run}}, sums); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"restart: preStop POST /drain?wait=propagation", "preStop: 1 call, median 5.00s; 1 failed (404 Not Found"} {
		if !strings.Contains(tbl.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, tbl.String())
		}
	}
}

// TestChartsShareOneTimeAxis: a short run drawn with the drill's longest
// duration gets the same axis as the longest run.
func TestChartsShareOneTimeAxis(t *testing.T) {
	short := syntheticRun("exit", 0, 0, 1500*time.Millisecond, 5)
	short.Duration = 10 * s
	long := syntheticRun("drainkit", 5*s, 1900*time.Millisecond, 1900*time.Millisecond, 0)
	long.Duration = 40 * s
	a, err := ChartSVG(short, long.Duration)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ChartSVG(long, long.Duration)
	if err != nil {
		t.Fatal(err)
	}
	ticks := regexp.MustCompile(`>(\d+)s<`)
	labels := func(svg []byte) string {
		var out []string
		for _, m := range ticks.FindAllSubmatch(svg, -1) {
			out = append(out, string(m[1]))
		}
		return strings.Join(out, ",")
	}
	if la, lb := labels(a), labels(b); la != lb || !strings.Contains(la, "40") {
		t.Fatalf("tick labels differ: short run %q, long run %q", la, lb)
	}
}

// TestSummarizeConsumerFigures: retried requests, requests written to a
// replaced replica and unanswered (not those to a replica that stays), the
// oldest view and the ejections are reported; the kill strategy's verdict
// names SIGKILL.
func TestSummarizeConsumerFigures(t *testing.T) {
	cfg := DefaultConfig()
	run := syntheticRun("kill", 0, 0, 1500*time.Millisecond, 5)
	run.Consumer, run.Ejections = "naive", 3
	run.Replicas[0].Timeline, run.Replicas[0].StopSignal = nil, "SIGKILL"
	run.Records[0].Retries = 2
	run.Records[1].Unanswered = 1 // r1 is replaced
	run.Records[2].Unanswered = 2 // r2 is not
	run.Records[3].ViewAge = 1500 * time.Millisecond
	sum := Summarize(cfg, run)
	if sum.Resent != 1 || sum.WrittenUnanswered != 1 || sum.ViewAgeMaxMs != 1500 || sum.Ejections != 3 || sum.Consumer != "naive" {
		t.Fatalf("retried %d, written-unanswered %d, view age %vms, ejections %d, consumer %q",
			sum.Resent, sum.WrittenUnanswered, sum.ViewAgeMaxMs, sum.Ejections, sum.Consumer)
	}
	if !strings.Contains(sum.Verdict, "SIGKILL ended the process with 1 request written to it and unanswered") ||
		!strings.Contains(sum.Verdict, "after SIGKILL") || sum.Replicas[0].Signal != "SIGKILL" {
		t.Fatalf("verdict %q, signal %q", sum.Verdict, sum.Replicas[0].Signal)
	}
	// The chart's lane marks and the replica table name the kill -9
	// SIGKILL, and r2's stop at the end SIGTERM.
	svg, err := ChartSVG(run, run.Duration)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(svg), ">SIGKILL<") || !strings.Contains(string(svg), ">SIGTERM<") {
		t.Errorf("the kill run's chart legend lacks SIGKILL or SIGTERM")
	}
	if row := replicaRow(run.Replicas[0], sum); row.Signal != "2.00 SIGKILL" {
		t.Errorf("r1's signal %q, want 2.00 SIGKILL", row.Signal)
	}
	if row := replicaRow(run.Replicas[1], sum); row.Signal != "9.00 SIGTERM" {
		t.Errorf("r2's signal %q, want 9.00 SIGTERM", row.Signal)
	}
}

// durationWords mark a JSON key that holds a duration or a time.
var durationWords = regexp.MustCompile(`second|time|timeout|interval|cache|baseline|tail|wait|lag|staleness|window|drain|age|started|ready|exited|signalled|sent|late_arrival$|prestop_at|took|wall|duration|start|end`)

// notDurations are keys that match durationWords but hold no duration.
var notDurations = map[string]bool{
	"late_arrivals": true, "consumer_staleness_cut": true, "prestop_calls": true, "prestop_failed": true,
	"pacing_late_sends": true, "late_requests": true, "late_reported_by": true, "timing_sources": true,
	"still_listed_when_load_stopped": true, "prestop_error": true, "schema_version": true, "rate_per_second": true,
	"resent_requests": true,
}

// checkJSONUnits fails for a JSON key of a duration or time that does not
// end in its unit (_s, _ms), and when the schema version is missing.
func checkJSONUnits(t *testing.T, js []byte) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	if v, _ := doc["schema_version"].(float64); int(v) != SchemaVersion {
		t.Errorf("schema_version %v, want %d", doc["schema_version"], SchemaVersion)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				unit := strings.HasSuffix(k, "_s") || strings.HasSuffix(k, "_ms")
				if !unit && !notDurations[k] && durationWords.MatchString(k) && !strings.HasSuffix(path, "_s") {
					t.Errorf("JSON key %s.%s holds a duration or time without its unit", path, k)
				}
				walk(path+"."+k, x)
			}
		case []any:
			for _, x := range v {
				walk(path+"[]", x)
			}
		}
	}
	walk("", doc)
}

// TestPerSecondIsARate: five failures within 100 ms are drawn as a rate
// of 10 per second over the 500 ms window, not as a spike of 5.
func TestPerSecondIsARate(t *testing.T) {
	var recs []Record
	for i := range 5 {
		recs = append(recs, Record{Start: 2*s + time.Duration(i)*10*time.Millisecond, Outcome: Refused})
	}
	_, failed := perSecond(recs, 4*s)
	peak, nonzero := 0.0, 0
	for _, p := range failed {
		peak = max(peak, p.Y)
		if p.Y > 0 {
			nonzero++
		}
	}
	if peak != 10 || nonzero != int(rateWindow/bucket) {
		t.Fatalf("peak %v/s over %d samples, want 10/s over %d", peak, nonzero, rateWindow/bucket)
	}
}

// TestDrainMarksDoNotOverlap: markers of different steps at the same
// instant sit at different heights of their lane.
func TestDrainMarksDoNotOverlap(t *testing.T) {
	seen := map[float64]bool{}
	for k := range drainMarks {
		o := markOffset(k)
		if seen[o] || o < -0.2 || o > 0.2 {
			t.Fatalf("mark %d offset %v: not distinct or outside its lane", k, o)
		}
		seen[o] = true
	}
}

// TestWindowFixNamesEverySetting: with a 35 s consumer cache the window
// must grow, and with it grace_period and the pod's
// terminationGracePeriodSeconds: one line names all three with values.
func TestWindowFixNamesEverySetting(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Timings.PropagationMin, cfg.Timings.PropagationQuiet, cfg.Timings.PropagationMax = 5*s, s, 15*s
	cfg.Timings.DrainTimeout, cfg.Timings.StopTimeout, cfg.Timings.GracePeriod = 8*s, 3*s, 30*s
	fix := windowFix(cfg, 36.2)
	t.Log(fix)
	for _, want := range []string{"propagation.max to at least 38s", "grace_period to at least 55s", "terminationGracePeriodSeconds to at least 60 (grace_period + 5s)"} {
		if !strings.Contains(fix, want) {
			t.Errorf("fix lacks %q: %s", want, fix)
		}
	}
	if strings.Contains(fix, "\n") {
		t.Errorf("fix spans lines: %q", fix)
	}
	// A grace period that already covers the longer window stays.
	cfg.Timings.GracePeriod = 90 * s
	if fix := windowFix(cfg, 36.2); !strings.Contains(fix, "keep grace_period 1m30s") || !strings.Contains(fix, "at least 95 ") {
		t.Errorf("fix %s", fix)
	}
}

// TestDeathsReported: replicas that ended without being stopped are named
// with their exit status and last stderr lines in the verdict, the table
// and the HTML report, grouped when alike.
func TestDeathsReported(t *testing.T) {
	cfg := DefaultConfig()
	run := syntheticRun("drainkit", 5*s, 1900*time.Millisecond, 1900*time.Millisecond, 0)
	run.Err = errors.New("drainkit: replica 3 exited before it was ready: exit status 2; its stderr ends with:\n    panic: boom")
	for _, id := range []int{3, 4} {
		run.Deaths = append(run.Deaths, ReplicaDeath{Replica: id, Role: RoleReplacement, Attempt: 1, At: 3.2, Lived: 0.02,
			BeforeReady: true, ExitStatus: "exit status 2", Stderr: []string{"starting", "panic: boom"}})
	}
	res := &Result{Config: cfg, Runs: []StrategyRun{run}}
	sums := Summaries(res)
	if v := sums[0].Verdict; !strings.Contains(v, "r3, r4 (exit status 2)") || strings.Contains(v, "panic: boom") {
		t.Errorf("verdict %q: want the replicas named, the stderr listed separately", v)
	}
	var tbl bytes.Buffer
	if err := WriteTable(&tbl, res, sums); err != nil {
		t.Fatal(err)
	}
	if strings.Count(tbl.String(), "panic: boom") != 1 || !strings.Contains(tbl.String(), "r3, r4 (2 starts) ended before ready") {
		t.Errorf("table:\n%s", tbl.String())
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, res, sums); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "panic: boom") || !strings.Contains(page.String(), "r3, r4 (2 starts)") {
		t.Errorf("the HTML report does not list the deaths")
	}
}

// TestOfflineKillVerdictSaysWhatToWait: Incident A's verdict names the wait
// an operator needs between the console's offline and kill -9 (the
// consumers' staleness, rounded up), and a run that lost nothing says the
// wait covered it.
func TestOfflineKillVerdictSaysWhatToWait(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Nacos, cfg.OfflineWait = "127.0.0.1:8848", 500*time.Millisecond
	run := syntheticRun(StrategyOfflineKill, 0, 0, 6400*time.Millisecond, 30)
	run.Replicas[0].Timeline = nil
	sum := Summarize(cfg, run)
	for _, want := range []string{"FAIL: 30 of", "killed each replica 500ms after the console's offline", "for up to 6.40s after the offline", "must wait 7s (--offline-wait)", "SIGTERM"} {
		if !strings.Contains(sum.Verdict, want) {
			t.Errorf("verdict lacks %q: %s", want, sum.Verdict)
		}
	}
	run.StillListed = []int{1}
	if v := Summarize(cfg, run).Verdict; !strings.Contains(v, "must wait at least 7s") {
		t.Errorf("cut staleness: the wait is a lower bound: %s", v)
	}
	cfg.OfflineWait = 8 * time.Second
	ok := syntheticRun(StrategyOfflineKill, 0, 0, 6400*time.Millisecond, 0)
	ok.Replicas[0].Timeline = nil
	if v := Summarize(cfg, ok).Verdict; !strings.HasPrefix(v, "PASS") || !strings.Contains(v, "waited 8s") || !strings.Contains(v, "up to 6.40s after the offline") {
		t.Errorf("pass verdict: %s", v)
	}
}
