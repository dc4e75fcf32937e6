// Command benchrun is `make bench`: it measures drainkit side by side with
// what users would use instead (issue 14) and prints one Markdown table per
// measurement, each row with its target and PASS, MISS or a reason why it
// could not be measured. Every figure is a ratio or a difference against a
// baseline measured in the same run, repeated, with its median and spread.
//
//	go run ./bench/cmd/benchrun [-quick] [-only 1,3] [-strict]
//
// -quick (or BENCH_QUICK=1) runs every table at reduced size in a few
// minutes and asserts no timing (rows show "ran" instead of PASS/MISS);
// CI runs it so that the harness cannot rot. -strict makes any MISS exit 1.
// The anchors (bench/anchors, a module of its own) are built with
// `go build -C bench/anchors`; this program never imports them.
//
// Run from the repository root. Consul comes from $DRAINKIT_CONSUL_BIN and
// etcd from $DRAINKIT_ETCD_BIN (the Makefile sets them from scripts/consul.sh
// and scripts/etcd.sh), else from their cache under ~/.cache/drainkit.
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == scaleServerCmd {
		os.Exit(scaleServer(os.Args[2:]))
	}
	os.Exit(run())
}

// options are the command line.
type options struct {
	quick  bool
	strict bool
	only   map[int]bool
}

func parseOptions() (options, error) {
	var o options
	only := ""
	flag.BoolVar(&o.quick, "quick", os.Getenv("BENCH_QUICK") == "1", "reduced sizes, no timing asserted (also BENCH_QUICK=1)")
	flag.BoolVar(&o.strict, "strict", false, "exit 1 when a target is missed")
	flag.StringVar(&only, "only", "", "comma-separated table numbers to run (default all, 1..7)")
	flag.Parse()
	if only != "" {
		o.only = map[int]bool{}
		for _, s := range strings.Split(only, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || n < 1 || n > 7 {
				return o, fmt.Errorf("-only: %q is not a table number 1..7", s)
			}
			o.only[n] = true
		}
	}
	return o, nil
}

// table is one numbered measurement.
type tableFunc func(env *env) (*Table, error)

func run() int {
	o, err := parseOptions()
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		return 2
	}
	raiseNoFile()
	start := time.Now()
	e, err := newEnv(o.quick)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchrun:", err)
		return 1
	}
	defer e.close()
	fmt.Printf("# drainkit benchmarks (%s, %s)\n\n", e.mode(), start.UTC().Format(time.RFC3339))
	fmt.Print(machine())
	tables := []tableFunc{tableDrill, tableOverhead, tableQuiescence, tablePropagation, tablePhysical, tableScale, tableCapacity}
	misses, failed := 0, 0
	for i, f := range tables {
		if o.only != nil && !o.only[i+1] {
			continue
		}
		t0 := time.Now()
		fmt.Fprintf(os.Stderr, "benchrun: table %d ...\n", i+1)
		t, err := f(e)
		if err != nil {
			fmt.Printf("## %d. failed\n\n%v\n\n", i+1, err)
			failed++
			continue
		}
		t.Took = time.Since(t0)
		fmt.Print(t.Markdown())
		misses += t.Misses()
	}
	fmt.Printf("Total: %s, %d target(s) missed, %d table(s) failed to run.\n", time.Since(start).Round(time.Second), misses, failed)
	if failed > 0 || (o.strict && misses > 0) {
		return 1
	}
	return 0
}
