package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var quiescenceName = regexp.MustCompile(`^BenchmarkQuiescence/idle=(\d+)/(drainkit|shutdown)$`)

// quiescenceSizes are the idle keep-alive connection counts of issue 14.
var quiescenceSizes = []int{0, 1000, 10000}

// tableQuiescence is table 3: from the last in-flight request finishing to
// the drain returning, with idle keep-alive connections open, drainkit
// against http.Server.Shutdown, from BenchmarkQuiescence/idle=N/{drainkit,
// shutdown} (httpdrain).
func tableQuiescence(e *env) (*Table, error) {
	count, benchtime := 5, "5x"
	if e.quick {
		count, benchtime = 1, "1x"
	}
	t := &Table{Num: 3, Title: "Quiescence: last in-flight request done to drain returned, with N idle keep-alive connections",
		Command: fmt.Sprintf("go test -run '^$' -bench '^BenchmarkQuiescence$' -count %d -benchtime %s ./httpdrain", count, benchtime),
		Header:  []string{"idle connections", "drainkit", "http.Server.Shutdown", "drainkit - Shutdown", "drainkit / Shutdown"}}
	ok, err := hasIdleQuiescence(e.root)
	if err != nil {
		return nil, err
	}
	if !ok {
		for _, n := range quiescenceSizes {
			t.Add(e.quick, "drainkit median < 1 ms", "not available", strconv.Itoa(n), "-", "-", "-", "-")
		}
		t.Note("BenchmarkQuiescence/idle=N/{drainkit,shutdown} is not in this tree yet (issue 14's quiescence fix adds it).")
		return t, nil
	}
	res, _, err := e.goBench(count, benchtime, "BenchmarkQuiescence")
	if err != nil {
		return nil, err
	}
	addQuiescenceRows(e, t, res)
	return t, nil
}

// hasIdleQuiescence reports whether a test file declares the idle=N
// variants of BenchmarkQuiescence.
func hasIdleQuiescence(root string) (bool, error) {
	found, err := benchFuncs(root, "BenchmarkQuiescence")
	if err != nil || found["BenchmarkQuiescence"] == "" {
		return false, err
	}
	files, _ := filepath.Glob(filepath.Join(root, found["BenchmarkQuiescence"], "*_test.go"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return false, err
		}
		if strings.Contains(string(data), "idle=") {
			return true, nil
		}
	}
	return false, nil
}

// lagMs returns each result's lag in milliseconds: its median metric (a
// unit naming "median", in µs, us, ms or ns), else ns/op.
func lagMs(r benchResult) (float64, bool) {
	for unit, v := range r.Metrics {
		if !strings.Contains(unit, "median") {
			continue
		}
		switch {
		case strings.HasPrefix(unit, "µs"), strings.HasPrefix(unit, "us"):
			return v / 1e3, true
		case strings.HasPrefix(unit, "ms"):
			return v, true
		case strings.HasPrefix(unit, "ns"):
			return v / 1e6, true
		}
	}
	v, ok := r.Metrics["ns/op"]
	return v / 1e6, ok
}

func addQuiescenceRows(e *env, t *Table, res []benchResult) {
	lags := map[string]Sample{} // "N/variant" -> repeats, ms
	for _, r := range res {
		m := quiescenceName.FindStringSubmatch(r.Name)
		if v, ok := lagMs(r); m != nil && ok {
			lags[m[1]+"/"+m[2]] = append(lags[m[1]+"/"+m[2]], v)
		}
	}
	sizes := slices.Clone(quiescenceSizes)
	for _, n := range sizes {
		dk, sd := lags[fmt.Sprint(n, "/drainkit")], lags[fmt.Sprint(n, "/shutdown")]
		if len(dk) == 0 {
			t.Add(e.quick, "drainkit median < 1 ms", "not available", strconv.Itoa(n), "-", sd.Fmt("%.2f ms"), "-", "-")
			continue
		}
		t.Add(e.quick, "drainkit median < 1 ms", verdict(dk.Median() < 1), strconv.Itoa(n),
			dk.Fmt("%.2f ms"), sd.Fmt("%.2f ms"), dk.Diff(sd).Fmt("%+.2f ms"), dk.Ratio(sd).Fmt("%.3f"))
	}
	t.Note("Each figure: the benchmark's median lag over its iterations, per repeat; then median (min..max, n=repeats) over repeats; differences and ratios paired per repeat.")
}
