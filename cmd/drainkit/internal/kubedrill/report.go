package kubedrill

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// Passed reports whether the drill passed: valid, and the drainkit
// strategy (when drilled) lost no request through any load kind.
func Passed(res *Result) bool {
	if res.Invalid != "" {
		return false
	}
	for _, s := range res.Strategies {
		if s.Strategy == StrategyDrainkit && s.Failed > 0 {
			return false
		}
	}
	return true
}

// lost is the requests strategy s lost through every load kind.
func (res *Result) lost(s string) int {
	n := 0
	for _, r := range res.Strategies {
		if r.Strategy == s {
			n += r.Failed
		}
	}
	return n
}

// label is the strategy's name in the table: sleep with its seconds.
func (res *Result) label(s string) string {
	if s == StrategySleep {
		return fmt.Sprintf("sleep %ds", res.PreStopSleepS)
	}
	return s
}

// WriteJSON writes res as indented JSON.
func WriteJSON(w io.Writer, res *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(res)
}

// WriteTable writes res as the strategies' table, the old pods' instants
// and a verdict.
func WriteTable(w io.Writer, res *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Kubernetes drill (namespace %s): %d replicas per strategy, %g requests/s per strategy and load kind, loads %s, `kubectl rollout restart` of %s\n\n",
		res.Namespace, res.Replicas, res.RatePerSecond, strings.Join(res.Loads, ", "), map[bool]string{true: "every Deployment at once", false: "each Deployment in turn"}[res.Concurrent])
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STRATEGY\tLOAD\tSENT\tFAILED\tUNATTRIBUTED\tDRAIN/POD MIN\tMEDIAN\tMAX\tFAILED/S FROM RESTART\tERRORS")
	for _, s := range res.Strategies {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", res.label(s.Strategy), s.Load, s.Sent, s.Failed, s.Unattributed,
			secs(s.DrainMinMS), secs(s.DrainMedianMS), secs(s.DrainMaxMS), perSecond(s.FailedPerSecond), errorsLine(s.Errors))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(&b, "\nOld pods, seconds from the restart: deleted (preStop starts), the kubelet's SIGTERM, the EndpointSlice's ready=false, serving=false, terminating, kube-proxy's rules without it%s, the last request it answered (sent), the process's end (its last log line) and the kubelet's report of the exit; DRAIN is deletion to the process's end:\n\n",
		map[bool]string{true: "", false: " (not read: run the drill as root on the node)"}[res.RulesRead])
	tw = tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STRATEGY\tLOAD\tPOD\tIP\tDELETED\tSIGTERM\tREADY=F\tSERVING=F\tTERMINATING\tRULES GONE\tLAST REQ\tDONE\tEXITED\tDRAIN\tSERVED\tFAILED")
	for _, s := range res.Strategies {
		for _, p := range s.Pods {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\n", res.label(s.Strategy), s.Load, p.Pod, p.IP,
				at(p.DeletedMS), at(p.SIGTERMMS), at(p.NotReadyMS), at(p.NotServingMS), at(p.TerminatingMS),
				at(p.RulesGoneMS), at(p.LastRequestMS), at(p.DoneMS), at(p.ExitedMS), secs(p.DrainMS), p.Served, p.Failed)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n" + Verdict(res) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// Verdict is the drill's conclusion in a sentence or two.
func Verdict(res *Result) string {
	if res.Invalid != "" {
		return "INVALID: " + res.Invalid
	}
	var parts []string
	for _, s := range res.Strategies {
		parts = append(parts, fmt.Sprintf("%s via %s lost %d of %d (drain per pod: median %s s, max %s s)", res.label(s.Strategy), s.Load, s.Failed, s.Sent, secs(s.DrainMedianMS), secs(s.DrainMaxMS)))
	}
	v := strings.Join(parts, "; ") + "."
	// A strategy's results through each load kind share its pods, so
	// its first result has its drain times.
	i := slices.IndexFunc(res.Strategies, func(s StrategyResult) bool { return s.Strategy == StrategyDrainkit })
	j := slices.IndexFunc(res.Strategies, func(s StrategyResult) bool { return s.Strategy == StrategySleep })
	if i >= 0 && j >= 0 && res.lost(StrategyDrainkit) == 0 && res.lost(StrategySleep) == 0 {
		d, sl := res.Strategies[i].DrainMaxMS, res.Strategies[j].DrainMaxMS
		switch {
		case d < sl:
			v += fmt.Sprintf(" At equal zero loss drainkit drained each pod in at most %s s, %s s sooner than %s.", secs(d), secs(sl-d), res.label(StrategySleep))
		default:
			v += fmt.Sprintf(" At equal zero loss drainkit took up to %s s per pod, %s no more than %s s: its window is held by propagation.min (set it lower, or let the evidence end it).", secs(d), res.label(StrategySleep), secs(sl))
		}
	}
	if Passed(res) {
		return "PASS: " + v
	}
	return "FAIL: " + v
}

// perSecond prints failures per second as "0 0 12 3", "-" for none.
func perSecond(n []int) string {
	if len(n) == 0 {
		return "-"
	}
	parts := make([]string, len(n))
	for i, v := range n {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, " ")
}

func secs(ms int64) string { return fmt.Sprintf("%.2f", float64(ms)/1000) }

func at(ms *int64) string {
	if ms == nil {
		return "-"
	}
	return secs(*ms)
}

// errorsLine lists the error classes with their counts, most first.
func errorsLine(errs map[string]int) string {
	type kv struct {
		k string
		n int
	}
	var l []kv
	for k, n := range errs {
		l = append(l, kv{k, n})
	}
	slices.SortFunc(l, func(a, b kv) int {
		if a.n != b.n {
			return b.n - a.n
		}
		return strings.Compare(a.k, b.k)
	})
	var parts []string
	for _, e := range l {
		parts = append(parts, fmt.Sprintf("%d %s", e.n, e.k))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}
