package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"time"
)

// drillSummary is the part of one strategy's `drainkit drill --json`
// summary the tables use (cmd/drainkit/internal/drill.Summary).
type drillSummary struct {
	Name         string         `json:"name"`
	Requests     int            `json:"requests"`
	Failed       int            `json:"failed"`
	ByKind       map[string]int `json:"failures_by_kind"`
	DrainSeconds []float64      `json:"drain_s"`
	DrainMedian  float64        `json:"drain_median_s"`
	Staleness    float64        `json:"consumer_staleness_s"`
	StaleCut     bool           `json:"consumer_staleness_cut"`
	Seconds      float64        `json:"duration_s"`
	LateSends    int64          `json:"pacing_late_sends"`
	MaxLagMs     float64        `json:"pacing_max_lag_ms"`
	LoadStart    float64        `json:"load_start_s"`
	LoadEnd      float64        `json:"load_end_s"`
	Error        string         `json:"error"`
}

// drillSchema is the `drainkit drill --json` schema_version these types
// follow (cmd/drainkit/internal/drill.SchemaVersion, which this module's
// internal rule keeps out of reach).
const drillSchema = 2

// drillReport is `drainkit drill --json`.
type drillReport struct {
	SchemaVersion int            `json:"schema_version"`
	Strategies    []drillSummary `json:"strategies"`
	Valid         bool           `json:"valid"`
	InvalidReason string         `json:"invalid_reason"`
	Wall          float64        `json:"wall_time_s"`
}

// drill runs `drainkit drill --json args...` and returns its report. The
// drill exits 1 when its gate strategy lost requests, which is a result
// here, not an error; exit 2 (bad usage, a replica that could not start)
// is an error.
func (e *env) drill(args ...string) (*drillReport, error) {
	if err := e.ensureBuilt(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args = append([]string{"drill", "--json"}, args...)
	cmd := exec.CommandContext(ctx, e.bin[binDrainkit], args...)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	// Exit 1 (a strategy lost requests) and 3 (the machine could not sustain
	// the run: Valid false) are results here.
	if err != nil && !(errors.As(err, &ee) && (ee.ExitCode() == 1 || ee.ExitCode() == 3)) {
		return nil, fmt.Errorf("drainkit %s: %v: %s", strings.Join(args, " "), err, tail(stderr.String(), 5))
	}
	var r drillReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return nil, fmt.Errorf("drainkit %s: reading its JSON: %v: %s", strings.Join(args, " "), err, tail(stderr.String(), 5))
	}
	if r.SchemaVersion != drillSchema {
		return nil, fmt.Errorf("drainkit %s: JSON schema_version %d, this harness reads %d", strings.Join(args, " "), r.SchemaVersion, drillSchema)
	}
	for _, s := range r.Strategies {
		if s.Error != "" {
			return nil, fmt.Errorf("drainkit %s: strategy %s: %s", strings.Join(args, " "), s.Name, s.Error)
		}
	}
	return &r, nil
}

// only returns the single strategy of an --exec drill.
func (r *drillReport) only() drillSummary {
	if len(r.Strategies) == 0 {
		return drillSummary{}
	}
	return r.Strategies[0]
}

// strategy returns the summary of the named strategy.
func (r *drillReport) strategy(name string) (drillSummary, bool) {
	for _, s := range r.Strategies {
		if s.Name == name {
			return s, true
		}
	}
	return drillSummary{}, false
}

// tail returns the last n lines of s, on one line.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

// parallelDrills runs one drill per argument list at once.
func (e *env) parallelDrills(args [][]string) ([]*drillReport, error) {
	out := make([]*drillReport, len(args))
	errs := make([]error, len(args))
	var wg sync.WaitGroup
	for i, a := range args {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = e.drill(a...)
		}()
	}
	wg.Wait()
	return out, errors.Join(errs...)
}
