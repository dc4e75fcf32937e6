package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// telemetryJSON is the part of `drill --json` this test reads: the drill's
// own counts per strategy and the consumers' OpenTelemetry counts.
type telemetryJSON struct {
	Strategies []struct {
		Name      string `json:"name"`
		Requests  int64  `json:"requests"`
		Failed    int64  `json:"failed"`
		Retries   int64  `json:"retries"`
		Ejections int64  `json:"ejections"`
		Telemetry *struct {
			Calls           int64            `json:"calls"`
			ByOutcome       map[string]int64 `json:"by_outcome"`
			Unclassified    int64            `json:"unclassified"`
			Spans           int64            `json:"spans"`
			SpansClassified int64            `json:"spans_classified"`
			Retries         int64            `json:"retries"`
			Ejections       int64            `json:"ejections"`
			ViewRevision    int64            `json:"view_revision"`
			ViewAge         float64          `json:"view_age_max_s"`
		} `json:"consumer_telemetry"`
	} `json:"strategies"`
}

// TestDrillConsumerTelemetry: a real drill (replicas as child processes, a
// rolling restart with drains and one with SIGKILL, at 300 requests/s)
// through drainkit consumers that each run an OTel SDK (a ManualReader and
// an in-memory span processor): every call the drill sent has a span and a
// count with its outcome and stage, and the retries and ejections the
// telemetry counted equal the drill's own (the drill counts retries from
// each request's consumer.Outcome and ejections from Transport.Status). The
// view's revision and age are exported.
func TestDrillConsumerTelemetry(t *testing.T) {
	r := drainkit(t, 3*time.Minute, shortEnv, append([]string{"drill", "--json", "--sequential", "--strategies", "drainkit,kill",
		"--consumer", "drainkit", "--rate", "300"}, short...)...)
	parseDrill(t, r)
	var out telemetryJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Strategies) != 2 {
		t.Fatalf("%d strategies, want 2", len(out.Strategies))
	}
	for _, s := range out.Strategies {
		tel := s.Telemetry
		if tel == nil {
			t.Fatalf("%s: no consumer_telemetry in the drill's JSON", s.Name)
		}
		t.Logf("%s: drill: %d requests, %d failed, %d retries, %d ejections; telemetry %+v", s.Name, s.Requests, s.Failed, s.Retries, s.Ejections, *tel)
		var answered, byOutcome int64
		for k, n := range tel.ByOutcome {
			byOutcome += n
			if strings.HasPrefix(k, "answered/") {
				answered += n
			}
		}
		if tel.Calls != s.Requests || byOutcome != s.Requests || tel.Unclassified != 0 {
			t.Errorf("%s: telemetry counted %d calls (%d by outcome and stage, %d without), the drill sent %d", s.Name, tel.Calls, byOutcome, tel.Unclassified, s.Requests)
		}
		if tel.Spans != s.Requests || tel.SpansClassified != s.Requests {
			t.Errorf("%s: %d spans, %d with outcome and stage, for %d calls", s.Name, tel.Spans, tel.SpansClassified, s.Requests)
		}
		if answered != s.Requests-s.Failed {
			t.Errorf("%s: telemetry: %d answered, the drill: %d of %d answered", s.Name, answered, s.Requests-s.Failed, s.Requests)
		}
		if tel.Retries != s.Retries || tel.Ejections != s.Ejections {
			t.Errorf("%s: telemetry: %d retries, %d ejections; the drill's table: %d retries, %d ejections", s.Name, tel.Retries, tel.Ejections, s.Retries, s.Ejections)
		}
		if tel.ViewRevision == 0 {
			t.Errorf("%s: no view revision exported", s.Name)
		}
		if s.Name == "kill" && (s.Retries == 0 || s.Ejections == 0) {
			t.Errorf("kill: %d retries, %d ejections: the SIGKILLs did not exercise retries and ejection, so the comparison says little", s.Retries, s.Ejections)
		}
	}
}
