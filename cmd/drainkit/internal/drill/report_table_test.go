package drill

import (
	"bytes"
	"strings"
	"testing"
)

// tableSums are three rows as wide as the drill makes them: a kill
// strategy that drained nothing and failed in several ways, a drained one,
// and one that did not run.
func tableSums() []Summary {
	return []Summary{
		{Scenario: "zone-loss", Name: "offline-kill", Consumer: "drainkit", Requests: 123456, Failed: 2345, WrittenUnanswered: 120,
			Resent: 17, Ejections: 3, FailuresByKind: map[string]int{"refused": 1200, "reset": 1000, "timeout": 145}},
		{Scenario: "rolling", Name: "drainkit", Consumer: "drainkit", Requests: 123456, DrainSeconds: []float64{1.5, 2.5},
			DrainMedianSeconds: 2, DrainMaxSeconds: 2.5, LateReportedBy: 1, StalenessSeconds: 0.25, stalenessMeasured: true},
		{Scenario: "rolling", Name: "naive", Consumer: "naive"},
	}
}

// TestTableFits120Columns: the default table and its legend fit 120
// columns; --wide (Config.Wide) adds the columns it leaves out; both
// explain every column under the table.
func TestTableFits120Columns(t *testing.T) {
	for _, wide := range []bool{false, true} {
		var b bytes.Buffer
		if err := writeRows(&b, tableSums(), wide); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		widest := 0
		for _, l := range strings.Split(out, "\n") {
			widest = max(widest, len(l))
		}
		if !wide && widest > 120 {
			t.Errorf("default table %d columns wide, want at most 120:\n%s", widest, out)
		}
		if wide && (widest <= 120 || !strings.Contains(out, "FAILURE KINDS") || !strings.Contains(out, "WRITTEN+UNANSWERED")) {
			t.Errorf("--wide table lacks the full columns:\n%s", out)
		}
		for _, want := range []string{"columns: REQUESTS", "RESENT requests a consumer", "STALENESS the latest",
			"- where nothing was", "refused 1200, reset 1000, timeout 145"} {
			if !strings.Contains(out, want) {
				t.Errorf("wide=%v: the table lacks %q:\n%s", wide, want, out)
			}
		}
	}
}

// TestTableDashWhereNothingMeasured: a strategy with no drain (SIGKILL)
// and no request after a stop shows "-" in DRAIN MEDIAN, DRAIN MAX and
// STALENESS, not 0.00s, which reads as a measured instant drain.
func TestTableDashWhereNothingMeasured(t *testing.T) {
	var b bytes.Buffer
	if err := writeRows(&b, tableSums(), false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	kill := strings.Fields(lines[1])
	if got := strings.Join(kill[len(kill)-4:], " "); got != "- - - -" {
		t.Errorf("kill row ends %q, want - - - - (drain median, drain max, late, staleness):\n%s", got, b.String())
	}
	drained := strings.Fields(lines[2])
	if got := strings.Join(drained[len(drained)-4:], " "); got != "2.00s 2.50s 0 0.25s" {
		t.Errorf("drained row ends %q, want 2.00s 2.50s 0 0.25s:\n%s", got, b.String())
	}
	if strings.Contains(b.String(), "0.00s") {
		t.Errorf("0.00s in the table:\n%s", b.String())
	}
}

// TestKillVerdictSuggestsDrainkitConsumer: the kill scenario's verdict with
// the naive consumer, which failed until the discovery dropped the dead
// replica, suggests --consumer drainkit; with drainkit's consumer it does
// not.
func TestKillVerdictSuggestsDrainkitConsumer(t *testing.T) {
	budget := 0
	for consumer, want := range map[string]bool{ConsumerNaive: true, ConsumerDrainkit: false} {
		v := killVerdict(Summary{Consumer: consumer, Requests: 100, Failed: 7, Budget: &budget, FailuresByKind: map[string]int{"refused": 7}})
		if got := strings.Contains(v, "rerun with --consumer drainkit"); got != want {
			t.Errorf("%s consumer: verdict %q; suggests --consumer drainkit: %v, want %v", consumer, v, got, want)
		}
	}
}
