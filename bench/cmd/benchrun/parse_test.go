package main

import (
	"math"
	"strings"
	"testing"
)

const benchOut = `goos: linux
goarch: amd64
pkg: github.com/drainkit/drainkit/httpdrain
BenchmarkHandler/bare/seq-2         	 1000000	         4.000 ns/op	       0 B/op	       0 allocs/op
BenchmarkHandler/drainkit/seq-2     	 1000000	        14.000 ns/op	       0 B/op	       0 allocs/op
BenchmarkHandler/bare/seq-2         	 1000000	         6.000 ns/op	       0 B/op	       0 allocs/op
BenchmarkHandler/drainkit/seq-2     	 1000000	        30.000 ns/op	       0 B/op	       0 allocs/op
BenchmarkHandler/drainkit/parallel  	 1000000	        20.000 ns/op	       8 B/op	       1 allocs/op
BenchmarkQuiescence/idle=10000/drainkit-2 	       5	         0 ns/op	       350.0 µs-median-lag	       900.0 µs-p90-lag
PASS
ok  	github.com/drainkit/drainkit/httpdrain	3.1s
`

func TestParseBench(t *testing.T) {
	res := parseBench([]byte(benchOut))
	if len(res) != 6 {
		t.Fatalf("parsed %d results, want 6: %+v", len(res), res)
	}
	if res[0].Name != "BenchmarkHandler/bare/seq" || res[0].Metrics["ns/op"] != 4 {
		t.Errorf("first result %+v: want BenchmarkHandler/bare/seq at 4 ns/op (GOMAXPROCS suffix stripped)", res[0])
	}
	if res[4].Name != "BenchmarkHandler/drainkit/parallel" || res[4].Metrics["allocs/op"] != 1 {
		t.Errorf("a name without suffix: %+v", res[4])
	}
	ns := series(res, "ns/op")
	d := ns["BenchmarkHandler/drainkit/seq"].Diff(ns["BenchmarkHandler/bare/seq"])
	if len(d) != 2 || d[0] != 10 || d[1] != 24 {
		t.Errorf("paired differences %v, want [10 24]", d)
	}
	if ms, ok := lagMs(res[5], "µs-median-lag"); !ok || math.Abs(ms-0.35) > 1e-9 {
		t.Errorf("lagMs = %v, %v; want 0.35 ms from µs-median-lag", ms, ok)
	}
	if _, ok := lagMs(res[5], "µs-median-serve-lag"); ok {
		t.Error("lagMs found a metric the result does not have")
	}
}

func TestFamilies(t *testing.T) {
	fam := families([]string{"B/bare/seq", "B/drainkit/seq", "B/otel/seq", "B/drainkit/parallel", "C/x/seq"}, "bare")
	if len(fam) != 1 {
		t.Fatalf("families %v: want only B/*/seq (the one with a bare variant)", fam)
	}
	v := fam["B/*/seq"]
	if v["bare"] != "B/bare/seq" || v["drainkit"] != "B/drainkit/seq" || v["otel"] != "B/otel/seq" {
		t.Errorf("B/*/seq = %v", v)
	}
}

func TestSample(t *testing.T) {
	s := Sample{5, 1, 3, 2, 4}
	if s.Median() != 3 || s.Min() != 1 || s.Max() != 5 || s.Quantile(0.25) != 2 {
		t.Errorf("median %v min %v max %v q25 %v", s.Median(), s.Min(), s.Max(), s.Quantile(0.25))
	}
	if got := s.Fmt("%.0f"); got != "3 (1..5, n=5)" {
		t.Errorf("Fmt = %q", got)
	}
	if !math.IsNaN(Sample{}.Median()) || (Sample{}).Fmt("%f") != "n/a" {
		t.Error("an empty sample must be NaN and n/a")
	}
}

func TestQuickNeverPasses(t *testing.T) {
	tb := &Table{Num: 9, Title: "x", Header: []string{"a"}}
	tb.Add(true, "t", Pass, "1")
	tb.Add(true, "t", Miss, "2")
	tb.Add(true, "t", "not available", "3")
	tb.Add(false, "t", Miss, "4")
	md := tb.Markdown()
	if strings.Contains(md, "| PASS |") || strings.Count(md, Ran) != 2 || !strings.Contains(md, "not available") {
		t.Errorf("quick rows must read %q, unavailable ones stay so:\n%s", Ran, md)
	}
	if tb.Misses() != 1 {
		t.Errorf("Misses = %d, want 1", tb.Misses())
	}
}

func TestCapacityRow(t *testing.T) {
	r := &drillReport{Valid: true, Strategies: []drillSummary{
		{Name: "drainkit", Requests: 1000, LoadStart: 0, LoadEnd: 10},
		{Name: "exit", Requests: 990, Failed: 40, LateSends: 5, LoadStart: 0, LoadEnd: 10},
	}}
	clean, row := capacityRow(r, 100)
	if !clean || row[5] != "0" || row[7] != "40" {
		t.Errorf("clean %v row %v", clean, row)
	}
	r.Valid = false
	if clean, _ := capacityRow(r, 100); clean {
		t.Error("a run the drill judged invalid must not be clean")
	}
	r.Valid = true
	r.Strategies[1].LateSends = 60
	if clean, _ := capacityRow(r, 100); clean {
		t.Error("6% late sends must not be clean")
	}
}
