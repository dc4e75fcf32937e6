package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/drill"
)

// TestDrillConsumerTelemetry: a real drill (replicas as child processes,
// rolling restarts of the four strategies, drains, exits and SIGKILLs, at
// 600 requests/s: TestDrillDrainkitConsumer's run, shared) through drainkit
// consumers that each run an OTel SDK (a ManualReader and
// an in-memory span processor): every call the drill sent has a span and a
// count with its outcome and stage, and the retries and ejections the
// telemetry counted equal the drill's own (the drill counts retries from
// each request's consumer.Outcome and ejections from Transport.Status). The
// view's revision and age are exported.
func TestDrillConsumerTelemetry(t *testing.T) {
	parallelDrill(t, 600)
	r := sharedDrainkit(t, 3*time.Minute, shortEnv, strategiesArgs(drainkitConsumerArgs)...)
	parseDrill(t, r)
	var out struct{ Strategies []drill.Summary }
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Strategies) != 4 {
		t.Fatalf("%d strategies, want 4", len(out.Strategies))
	}
	for _, s := range out.Strategies {
		tel := s.ConsumerTelemetry
		if tel == nil {
			t.Fatalf("%s: no consumer_telemetry in the drill's JSON", s.Name)
		}
		t.Logf("%s: drill: %d requests, %d failed, %d retries, %d ejections; telemetry %+v", s.Name, s.Requests, s.Failed, s.Retries, s.Ejections, *tel)
		requests, failed, retries := int64(s.Requests), int64(s.Failed), int64(s.Retries)
		var answered, byOutcome int64
		for k, n := range tel.ByOutcome {
			byOutcome += n
			if strings.HasPrefix(k, "answered/") {
				answered += n
			}
		}
		if tel.Calls != requests || byOutcome != requests || tel.Unclassified != 0 {
			t.Errorf("%s: telemetry counted %d calls (%d by outcome and stage, %d without), the drill sent %d", s.Name, tel.Calls, byOutcome, tel.Unclassified, requests)
		}
		if tel.Spans != requests || tel.SpansClassified != requests {
			t.Errorf("%s: %d spans, %d with outcome and stage, for %d calls", s.Name, tel.Spans, tel.SpansClassified, requests)
		}
		if answered != requests-failed {
			t.Errorf("%s: telemetry: %d answered, the drill: %d of %d answered", s.Name, answered, requests-failed, requests)
		}
		if tel.Retries != retries || tel.Ejections != s.Ejections {
			t.Errorf("%s: telemetry: %d retries, %d ejections; the drill's table: %d retries, %d ejections", s.Name, tel.Retries, tel.Ejections, retries, s.Ejections)
		}
		if tel.ViewRevision == 0 || tel.ViewAgeMaxSeconds <= 0 {
			t.Errorf("%s: view revision %d, age %vs: not exported", s.Name, tel.ViewRevision, tel.ViewAgeMaxSeconds)
		}
		if s.Name == "kill" && (retries == 0 || s.Ejections == 0) {
			t.Errorf("kill: %d retries, %d ejections: the SIGKILLs did not exercise retries and ejection, so the comparison says little", retries, s.Ejections)
		}
	}
}
