package kubedrill

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// wideResult is a Kubernetes drill as wide as its text gets: the three
// strategies through both load kinds, three old pods each with the
// Deployments' real pod names, every instant seen (kube-proxy's rules
// read), instants past 100 s, failures through both kinds, failures per
// second over 40 s, error messages that name URLs, and a verdict that
// sets drainkit beside preStop sleep.
func wideResult() *Result {
	ms := func(v int64) *int64 { return &v }
	perSecond := make([]int, 40)
	for i := range perSecond {
		perSecond[i] = 100 + i
	}
	res := &Result{Namespace: "drainkit-drill-1765000000", Replicas: 3, RatePerSecond: 2000,
		Loads: []string{LoadService, LoadEndpointSlices}, PreStopSleepS: 30, RulesRead: true}
	for si, s := range Strategies {
		for li, load := range res.Loads {
			r := StrategyResult{Strategy: s, Load: load, Sent: 1234567, Failed: 12345 * si, Unattributed: 123 * si,
				DrainMinMS: 101230, DrainMedianMS: 112340, DrainMaxMS: 123450}
			if si > 0 {
				r.FailedPerSecond = perSecond
				r.Errors = map[string]int{"connection refused": 12000, "connection reset by peer": 222,
					`Get "http://drill-shutdown.drainkit-drill-1765000000.svc:80/": context deadline exceeded`: 123}
			}
			for p, suffix := range []string{"abcde", "fghij", "klmno"} {
				base := int64(100000 + 10000*p)
				r.Pods = append(r.Pods, PodResult{Pod: fmt.Sprintf("drill-%s-7d9c8b6f5-%s", s, suffix),
					IP: fmt.Sprintf("10.200.%d.%d", 100+si, 200+p), DeletedMS: ms(base), SIGTERMMS: ms(base + 30000),
					NotReadyMS: ms(base + 12), NotServingMS: ms(base + 13), TerminatingMS: ms(base + 14), RemovedMS: ms(base + 40000),
					RulesGoneMS: ms(base + 1234), LastRequestMS: ms(base + 2345 + int64(li)), DoneMS: ms(base + 33456),
					ExitedMS: ms(base + 34567), DrainMS: 33456, Failed: 4115 * si, Served: 123456})
			}
			res.Strategies = append(res.Strategies, r)
		}
	}
	return res
}

// render is WriteTable's output of res, default or --wide.
func render(t *testing.T, res *Result, wide bool) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteTable(&b, res, wide); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestReportFits120Columns renders wideResult's text output: by default
// every line fits 120 columns (a line of one word, a URL that must stay
// whole, is let through) and the pods table still names each old pod in
// full with its key instants, failures and drain time; --wide adds the
// columns the default leaves out and breaks no line.
func TestReportFits120Columns(t *testing.T) {
	res := wideResult()
	out := render(t, res, false)
	for i, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > 120 && strings.Contains(strings.TrimSpace(l), " ") {
			t.Errorf("default line %d is %d columns > 120: %q", i+1, n, l)
		}
	}
	for _, want := range []string{"drill-drainkit-7d9c8b6f5-abcde", "drill-shutdown-7d9c8b6f5-klmno", "drill-sleep-7d9c8b6f5-fghij",
		"STRATEGY", "POD", "DELETED", "SIGTERM", "READY=F", "RULES GONE", "LAST REQ", "DONE", "DRAIN", "FAILED", "columns:",
		"connection refused", "context deadline exceeded"} {
		if !strings.Contains(out, want) {
			t.Errorf("default output lacks %q:\n%s", want, out)
		}
	}
	// Without --wide a pod is one row, its failures summed over the load
	// kinds: shutdown's pods have 4115 through each kind.
	if !strings.Contains(out, " 8230\n") {
		t.Errorf("default output lacks a shutdown pod's 8230 failures over both load kinds:\n%s", out)
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("default output:\n%s", out)
	}

	wide := render(t, res, true)
	for _, want := range []string{"IP", "10.200.101.201", "SERVING=F", "TERMINATING", "EXITED", "SERVED", "FAILED/S FROM RESTART",
		"ERRORS", "100 101 102", "\n" + Verdict(res) + "\n"} {
		if !strings.Contains(wide, want) {
			t.Errorf("--wide output lacks %q:\n%s", want, wide)
		}
	}
	for _, notWant := range []string{"10.200.101.201", "100 101 102"} {
		if strings.Contains(out, notWant) {
			t.Errorf("default output has %q, which is --wide's", notWant)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "STRATEGY") && strings.Contains(l, "SERVING=F") {
			t.Errorf("default pods table has --wide's SERVING=F: %q", l)
		}
	}
}
