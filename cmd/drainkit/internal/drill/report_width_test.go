package drill

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// f64 and u64 are pointers to v, as an EventSummary holds its instants.
func f64(v float64) *float64 { return &v }
func u64(v uint64) *uint64   { return &v }

// wideReport is a drill as wide as its text gets: Nacos discovery with its
// long description, offline-kill, preStop, a consumer cache, --sequential,
// every timing set from a variable; twelve replicas with instants past 100
// s and Consul-sized revisions, an added replica, a fault whose failures
// per second span 40 s, consumer telemetry split many ways, a replica's
// JSON log line on stderr, a window warning naming callers at [::1]:65535
// and a verdict of several sentences.
func wideReport(wide bool) (*Result, []Summary) {
	cfg := DefaultConfig()
	cfg.Wide = wide
	cfg.Replicas, cfg.Rate, cfg.Consumers = 12, 2500, 16
	cfg.Nacos, cfg.NacosPoll = "[::1]:65535", 10*time.Second
	cfg.Strategies = []string{StrategyDrainkit, StrategyOfflineKill}
	cfg.OfflineWait = 90 * time.Second
	cfg.PreStop, cfg.Sequential, cfg.ConsumerCache = true, true, 35*time.Second
	cfg.TimingSources = map[string]string{}
	for k := range cfg.timings() {
		cfg.TimingSources[k] = "env DRAINKIT_" + strings.ToUpper(strings.NewReplacer(".", "_").Replace(k))
	}
	perSecond := make([]int, 40)
	for i := range perSecond {
		perSecond[i] = 1000 + i
	}
	var events []EventSummary
	for r := 1; r <= 12; r++ {
		events = append(events, EventSummary{Kind: "SIGKILL", Replica: r, FaultSeconds: 100 + float64(r)*1.11,
			RegistryDecisionSeconds: f64(123.45), RegistryRevision: u64(123456789012),
			ConsumerViewSeconds: f64(124.56), ConsumerRevision: u64(123456789013),
			LastSentSeconds: f64(125.67), EjectionSeconds: f64(123.99), FailuresPerSecond: perSecond, Failed: 41780})
	}
	events = append(events, EventSummary{Kind: "brownout", Replica: 13, Added: true, FaultSeconds: 130.01,
		RegistryDecisionSeconds: f64(131.02), RegistryRevision: u64(123456789014), ConsumerViewSeconds: f64(132.03),
		ConsumerRevision: u64(123456789015), FirstSentSeconds: f64(133.04), ReadySeconds: f64(134.05), EarlyRequests: 12345,
		EjectionSeconds: f64(135.06), FailuresPerSecond: perSecond, Failed: 41780})
	callers := "[::1]:65535 (identity orders-consumer-7f9c8d6b5-x2x7q, usual gap 2.5s, last request 0.4s ago), " +
		"[::1]:65534 (identity orders-consumer-7f9c8d6b5-abcde, usual gap 2.5s, last request 0.3s ago)"
	long := "FAIL: 41780 of 1234567 requests failed (refused 40000, reset 1000, timeout 780), over the failure budget of 12 " +
		"(the requests written to the killed replica and unanswered); the naive consumer kept sending to the dead address " +
		"[::1]:65535 for 25.67s until the readiness probes dropped it: rerun with --consumer drainkit, which ejects a refused " +
		"instance at once and resends what was never written"
	sums := []Summary{
		{Scenario: ScenarioOutage, Name: StrategyOfflineKill, Consumer: ConsumerDrainkit, Requests: 1234567, Failed: 41780,
			WrittenUnanswered: 12000, Resent: 123456, Retries: 234567, Ejections: 12345,
			FailuresByKind: map[string]int{"refused": 40000, "reset": 1000, "timeout": 780},
			DrainSeconds:   []float64{123.45}, DrainMedianSeconds: 123.45, DrainMaxSeconds: 123.45, LateReportedBy: 1, LateRequests: 123456,
			StalenessSeconds: 123.45, stalenessMeasured: true, Events: events, Verdict: long,
			PreStopCalls: 12, PreStopFailed: 3, PreStopMedianSeconds: 12.34,
			PreStopError: "Post \"http://[::1]:65535/drain?wait=propagation\": context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
			WindowWarnings: []WindowWarning{{Replica: 12, CallersDue: 2, Callers: callers,
				PropagationMaxAtLeastMs: 123000, GracePeriodAtLeastMs: 150000, TerminationGracePeriodAtLeastS: 180}},
			Deaths: []ReplicaDeath{{Replica: 12, Role: "new", Attempt: 3, At: 123.45, Lived: 12.34, BeforeReady: true,
				ExitStatus: "signal: segmentation fault (core dumped)",
				Stderr: []string{`{"time":"2026-12-06T01:15:24.337653326Z","level":"ERROR","msg":"serve failed","strategy":"crash-on-start",` +
					`"error":"listen tcp [::1]:65535: bind: address already in use; set --metrics-addr to a free port"}`}}},
			LateSends: 12345, MaxLagMs: 1234,
			ConsumerTelemetry: &ConsumerTelemetry{Calls: 1234567, Retries: 234567, Ejections: 12345, BudgetDenials: 1234, PanicEntries: 12,
				ViewRevision: 123456789, ByOutcome: map[string]int64{"answered/answered": 1192787, "failed/connect_refused": 40000,
					"failed/reset_after_write": 1000, "failed/timeout": 780, "retried/connect_refused": 123456}}},
		{Scenario: ScenarioZoneLoss, Name: StrategyDrainkit, Consumer: ConsumerDrainkit, Requests: 1234567, Verdict: "PASS: " + long[6:]},
	}
	return &Result{Config: cfg, Wall: 1234 * time.Second}, sums
}

// TestReportFits120Columns renders the whole text report of wideReport:
// by default every line fits 120 columns (a line that is one word longer
// than that, a path or URL that must stay whole, is let through, and the
// report has none); --wide keeps the events' revisions, READY and failures
// per second, the telemetry's outcomes as a column and every line whole.
func TestReportFits120Columns(t *testing.T) {
	for _, wide := range []bool{false, true} {
		var b bytes.Buffer
		res, sums := wideReport(wide)
		if err := WriteTable(&b, res, sums); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		widest := 0
		for i, l := range strings.Split(out, "\n") {
			n := utf8.RuneCountInString(l)
			widest = max(widest, n)
			if !wide && n > 120 {
				t.Errorf("line %d is %d columns wide, want at most 120:\n%s", i+1, n, l)
			}
		}
		t.Logf("wide=%v: widest line %d columns", wide, widest)
		var want []string
		if wide {
			want = []string{"REGISTRY DECISION", "123.45 (rev 123456789012)", "first 133.04, READY 134.05, 12345 before",
				"FAILURES/S", "1000 1001 1002", "BY OUTCOME/STAGE", "failed/reset_after_write=1000", "(" + sums[0].WindowWarnings[0].Callers + ")"}
		} else {
			want = []string{"--wide adds", "12345 early", "columns: FAULT", "failed/reset_after_write=1000"}
			for _, no := range []string{"FAILURES/S", "(rev 123456789012)"} {
				if strings.Contains(out, no) {
					t.Errorf("default report shows %q, a --wide column:\n%s", no, out)
				}
			}
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("wide=%v: the report lacks %q:\n%s", wide, w, out)
			}
		}
		if wide && widest <= 120 {
			t.Errorf("--wide report at most 120 columns wide: it lost detail:\n%s", out)
		}
		if t.Failed() || testing.Verbose() {
			t.Logf("wide=%v report:\n%s", wide, out)
		}
	}
}
