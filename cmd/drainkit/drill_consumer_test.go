package main

import (
	"testing"
	"time"
)

// drillStrategies runs the drill with the four strategies and returns the
// strategies by name.
func drillStrategies(t *testing.T, env []string, args ...string) map[string]drillStrategy {
	t.Helper()
	all := append([]string{"drill", "--json", "--strategies", "drainkit,shutdown,exit,kill"}, args...)
	out := parseDrill(t, drainkit(t, 3*time.Minute, env, all...))
	byName := map[string]drillStrategy{}
	for _, s := range out.Strategies {
		byName[s.Name] = s
	}
	if len(byName) != 4 {
		t.Fatalf("%d strategies reported, want 4", len(byName))
	}
	return byName
}

type drillStrategy = struct {
	Name           string         `json:"name"`
	Consumer       string         `json:"consumer"`
	Requests       int            `json:"requests"`
	Failed         int            `json:"failed"`
	Retried        int            `json:"retried"`
	Ejections      int64          `json:"ejections"`
	Unanswered     int            `json:"written_unanswered"`
	FailuresByKind map[string]int `json:"failures_by_kind"`
	DrainSeconds   []float64      `json:"drain_seconds"`
	LateRequests   int64          `json:"late_requests"`
	LastLate       float64        `json:"last_late_arrival_seconds"`
	Window         float64        `json:"window_seconds"`
	Staleness      float64        `json:"consumer_staleness_seconds"`
	StalenessCut   bool           `json:"consumer_staleness_cut"`
	LoadStart      float64        `json:"load_start_seconds"`
	LoadEnd        float64        `json:"load_end_seconds"`
	PreStopCalls   int            `json:"prestop_calls"`
	PreStopFailed  int            `json:"prestop_failed"`
	PreStopMedian  float64        `json:"prestop_median_seconds"`
	Verdict        string         `json:"verdict"`
	Error          string         `json:"error"`
	LateSends      int64          `json:"pacing_late_sends"`
	Replicas       []struct {
		ID         int                `json:"id"`
		Role       string             `json:"role"`
		ExitStatus string             `json:"exit_status"`
		Steps      map[string]float64 `json:"steps"`
		StepErrors map[string]string  `json:"step_errors"`
		PreStop    *float64           `json:"prestop_seconds"`
		PreStopErr string             `json:"prestop_error"`
		SIGTERM    *float64           `json:"sigterm"`
		Signal     string             `json:"signal"`
		Exited     *float64           `json:"exited"`
	} `json:"replicas"`
}

// short are drill settings that keep a four-strategy run near 20 s.
var short = []string{"--replicas", "2", "--baseline", "1s", "--tail", "1s"}

var shortEnv = []string{"DRAINKIT_PROPAGATION_MIN=1s"}

// TestDrillDrainkitConsumer: with the drainkit consumer no strategy loses a
// GET at 600 requests/s, SIGKILL included (what was cut in flight is
// retried, refused dials go elsewhere, the dead replica is ejected); the
// naive consumer, in the same settings, loses requests with shutdown, exit
// and kill (the check can fail).
func TestDrillDrainkitConsumer(t *testing.T) {
	t.Run("drainkit", func(t *testing.T) {
		for name, s := range drillStrategies(t, shortEnv, append([]string{"--consumer", "drainkit", "--rate", "600"}, short...)...) {
			if s.Failed != 0 || s.Consumer != "drainkit" {
				t.Errorf("%s: %d of %d failed %v (consumer %q)", name, s.Failed, s.Requests, s.FailuresByKind, s.Consumer)
			}
			if name != "drainkit" && s.Retried == 0 {
				t.Errorf("%s: no retry: the check did not exercise the consumer", name)
			}
		}
	})
	t.Run("naive", func(t *testing.T) {
		got := drillStrategies(t, shortEnv, append([]string{"--consumer", "naive", "--rate", "600"}, short...)...)
		for _, name := range []string{"shutdown", "exit", "kill"} {
			if got[name].Failed == 0 {
				t.Errorf("%s with the naive consumer: no failure", name)
			}
		}
	})
}

// TestDrillDrainkitConsumerPOST: POSTs are never retried once written, so
// only those written to a dying replica and unanswered may fail; with the
// drainkit strategy none is.
func TestDrillDrainkitConsumerPOST(t *testing.T) {
	got := drillStrategies(t, shortEnv, append([]string{"--consumer", "drainkit", "--method", "POST", "--rate", "300"}, short...)...)
	for name, s := range got {
		t.Logf("%s: %d failed, %d written and unanswered", name, s.Failed, s.Unanswered)
		if name == "drainkit" && s.Failed != 0 {
			t.Errorf("drainkit: %d POSTs failed %v", s.Failed, s.FailuresByKind)
		}
		if s.Failed > s.Unanswered {
			t.Errorf("%s: %d POSTs failed but only %d were written to a dying replica and unanswered", name, s.Failed, s.Unanswered)
		}
	}
}

// TestDrillDrainkitConsumerCache35s: a 35 s consumer-side cache with the
// default timings loses requests with the naive consumer (the issue's
// 1,893 of 18,378); the drainkit consumer loses none: refused dials to the
// stopped replicas fail over and eject them.
func TestDrillDrainkitConsumerCache35s(t *testing.T) {
	r := drainkit(t, 3*time.Minute, nil, "drill", "--json", "--strategies", "drainkit", "--consumer", "drainkit",
		"--consumer-cache", "35s", "--replicas", "2", "--baseline", "1s", "--tail", "1s")
	out := parseDrill(t, r)
	if len(out.Strategies) != 1 {
		t.Fatalf("%d strategies", len(out.Strategies))
	}
	if s := out.Strategies[0]; s.Failed != 0 || s.Requests < 1000 {
		t.Errorf("%d of %d failed: %v", s.Failed, s.Requests, s.FailuresByKind)
	}
}
