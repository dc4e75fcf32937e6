// Command natsdrill is the worker drill (issue 24): it starts a real
// nats-server with JetStream in its own process, runs three worker replicas
// (itself, started again as a replica), publishes a known set of messages
// at a steady rate, rolling-restarts every replica while they arrive, and
// reports per strategy: processed, processed twice (begun more than once),
// lost (never finished within the run) and in flight when cut, with every
// replica's exit code.
//
//	go run ./workdrain/natsdrain/cmd/natsdrill                 # 10,000 messages at 300/s
//	go run ./workdrain/natsdrain/cmd/natsdrill --messages 3000 --strategies drainkit
//
// Strategies: drainkit (natsdrain under drainkit.Main) and plain (jetstream's
// Consume, a plain Stop and Close on SIGTERM). Each message takes 50-500 ms.
// Exit codes: 0 the drainkit strategy processed every message exactly once
// and every drain exited 0 (or it was not run); 1 it did not; 2 bad usage or
// a run that could not complete.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/drainkit/drainkit/workdrain/natsdrain/internal/workerdrill"
)

func main() {
	workerdrill.ExitIfReplica()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("natsdrill", flag.ContinueOnError)
	fs.SetOutput(stderr)
	messages := fs.Int("messages", 10000, "messages to publish (at least 100)")
	rate := fs.Float64("rate", 300, "messages published per second (1 to 5000)")
	strategies := fs.String("strategies", "drainkit,plain", "comma-separated strategies: drainkit, plain")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *messages < 100 {
		fmt.Fprintf(stderr, "natsdrill: --messages %d: at least 100\n", *messages)
		return 2
	}
	if *rate < 1 || *rate > 5000 {
		fmt.Fprintf(stderr, "natsdrill: --rate %g: 1 to 5000 per second\n", *rate)
		return 2
	}
	list := strings.Split(*strategies, ",")
	for _, s := range list {
		if s != workerdrill.StrategyDrainkit && s != workerdrill.StrategyPlain {
			fmt.Fprintf(stderr, "natsdrill: --strategies: unknown strategy %q (drainkit, plain)\n", s)
			return 2
		}
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(stderr, "natsdrill:", err)
		return 2
	}
	fmt.Fprintf(stdout, "natsdrill: 3 replicas, %d messages at %g/s (50-500 ms each), every replica restarted once\n", *messages, *rate)
	var results []workerdrill.Result
	for _, s := range list {
		res, err := drill(workerdrill.Exec{Path: exe}, s, *messages, *rate)
		if err != nil {
			fmt.Fprintf(stderr, "natsdrill: strategy %s: %v\n", s, err)
			return 2
		}
		results = append(results, res)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "strategy\tprocessed\tprocessed twice\tlost\tin flight when cut\tdrain exit codes")
	code := 0
	for _, r := range results {
		t := r.Tally
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%v\n", r.Strategy, t.Processed, t.ProcessedTwice, t.Lost, t.CutInFlight, r.ExitCodes)
		if r.Strategy == workerdrill.StrategyDrainkit && !exactlyOnce(r) {
			code = 1
		}
	}
	_ = tw.Flush()
	return code
}

// drill runs one strategy against a fresh server and store.
func drill(x workerdrill.Exec, strategy string, messages int, rate float64) (workerdrill.Result, error) {
	dir, err := os.MkdirTemp("", "natsdrill-")
	if err != nil {
		return workerdrill.Result{}, err
	}
	defer os.RemoveAll(dir)
	n, err := workerdrill.StartNATS(dir, 5*time.Second)
	if err != nil {
		return workerdrill.Result{}, err
	}
	defer n.Close()
	return x.RollingRestart(n, dir, strategy, messages, rate)
}

func exactlyOnce(r workerdrill.Result) bool {
	t := r.Tally
	if t.Lost != 0 || t.ProcessedTwice != 0 || t.CutInFlight != 0 || t.Processed != t.Published {
		return false
	}
	for _, c := range r.ExitCodes {
		if c != 0 {
			return false
		}
	}
	return true
}
