package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/drainkit/drainkit/workdrain/natsdrain/internal/workerdrill"
	"go.uber.org/goleak"
)

// TestMain runs a replica when the drill starts this test binary as one.
func TestMain(m *testing.M) {
	workerdrill.ExitIfReplica()
	goleak.VerifyTestMain(m)
}

func TestBadUsageExits2(t *testing.T) {
	for _, args := range [][]string{{"--messages", "10"}, {"--rate", "0"}, {"--strategies", "drainkit,none"}, {"--nope"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 2 {
			t.Errorf("natsdrill %v exited %d, want 2 (%s)", args, code, errb.String())
		}
	}
}

// A small drill of both strategies: the drainkit row processes every
// message once and the drill exits 0.
func TestDrillReportsEachStrategy(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"--messages", "600"}, &out, &errb)
	t.Logf("\n%s%s", out.String(), errb.String())
	if code != 0 {
		t.Fatalf("natsdrill exited %d, want 0", code)
	}
	for _, want := range []string{"strategy  processed  processed twice  lost  in flight when cut", "drainkit  600        0                0     0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if !strings.Contains(out.String(), "\nplain ") {
		t.Error("report lacks the plain strategy's row")
	}
}

// The exit code's judgement: one message processed twice, lost or cut, or
// one drain not exiting 0, fails the drainkit strategy.
func TestExactlyOnce(t *testing.T) {
	ok := workerdrill.Result{Tally: workerdrill.Tally{Published: 5, Processed: 5}, ExitCodes: []int{0, 0}}
	if !exactlyOnce(ok) {
		t.Fatal("a clean run judged a failure")
	}
	for _, bad := range []func(r *workerdrill.Result){
		func(r *workerdrill.Result) { r.Tally.ProcessedTwice = 1 },
		func(r *workerdrill.Result) { r.Tally.Lost, r.Tally.Processed = 1, 4 },
		func(r *workerdrill.Result) { r.Tally.CutInFlight = 1 },
		func(r *workerdrill.Result) { r.ExitCodes = []int{0, 1} },
	} {
		r := ok
		r.ExitCodes = append([]int(nil), ok.ExitCodes...)
		bad(&r)
		if exactlyOnce(r) {
			t.Errorf("%+v judged exactly once", r)
		}
	}
}
