package kubedrill

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/textwidth"
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

// WriteTable writes res as text: the strategies' table, the old pods'
// table and the verdict, each table with a legend. By default every line
// fits textwidth.Columns: the strategies' table lists the errors under it
// and leaves the failures per second to wide (--wide), the pods' table has
// a row per old pod (its failures summed over the load kinds) with its key
// instants and leaves the rest to wide, and the prose is broken at
// spaces. wide prints every column, a pods row per load kind, and breaks
// no line.
func WriteTable(w io.Writer, res *Result, wide bool) error {
	width := textwidth.Width(wide)
	var b strings.Builder
	head := fmt.Sprintf("Kubernetes drill (namespace %s): %d replicas per strategy, %g requests/s per strategy and load kind, loads %s, `kubectl rollout restart` of %s",
		res.Namespace, res.Replicas, res.RatePerSecond, strings.Join(res.Loads, ", "), map[bool]string{true: "every Deployment at once", false: "each Deployment in turn"}[res.Concurrent])
	b.WriteString(textwidth.FitLine(head, width, textwidth.Hang) + "\n\n")
	if err := writeStrategies(&b, res, wide); err != nil {
		return err
	}
	b.WriteString("\nOld pods, seconds from their strategy's restart:\n\n")
	if err := writePods(&b, res, wide); err != nil {
		return err
	}
	b.WriteString("\n" + textwidth.FitLine(Verdict(res), width, textwidth.Hang) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeStrategies writes a row per strategy and load kind, and its legend.
// The default table lists each row's errors under it (an error message
// may be long) and leaves the failures per second to wide.
func writeStrategies(b *strings.Builder, res *Result, wide bool) error {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	head := "STRATEGY\tLOAD\tSENT\tFAILED\tUNATTRIBUTED\tDRAIN/POD MIN\tMEDIAN\tMAX"
	if wide {
		head += "\tFAILED/S FROM RESTART\tERRORS"
	}
	fmt.Fprintln(tw, head)
	var under []string
	for _, s := range res.Strategies {
		row := fmt.Sprintf("%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s", res.label(s.Strategy), s.Load, s.Sent, s.Failed, s.Unattributed,
			secs(s.DrainMinMS), secs(s.DrainMedianMS), secs(s.DrainMaxMS))
		if wide {
			row += "\t" + perSecond(s.FailedPerSecond) + "\t" + errorsLine(s.Errors)
		} else if len(s.Errors) > 0 {
			under = append(under, textwidth.FitLine(fmt.Sprintf("%s via %s, errors: %s", res.label(s.Strategy), s.Load, errorsLine(s.Errors)), textwidth.Columns, textwidth.Hang))
		}
		fmt.Fprintln(tw, row)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(under) > 0 {
		b.WriteString("\n" + strings.Join(under, "\n") + "\n")
	}
	parts := []string{"columns: SENT the requests through the load kind; FAILED of them; UNATTRIBUTED failures in no old pod's termination;",
		"DRAIN/POD MIN, MEDIAN, MAX an old pod's deletion to its process's end, seconds;"}
	if wide {
		parts = append(parts, "FAILED/S FROM RESTART the failures by the second they were sent in; ERRORS the failures by cause.")
	} else {
		parts = append(parts, "the errors by cause are listed under the table; --wide adds FAILED/S FROM RESTART, the failures by the second they were sent in.")
	}
	b.WriteString(textwidth.Legend(parts))
	return nil
}

// writePods writes the old pods' table and its legend. The default table
// has a row per old pod with the instants that decide a drain (deletion,
// SIGTERM, ready=false, kube-proxy's rules, the last request, the
// process's end), its drain time and its failures through every load
// kind; wide adds the pod's IP, serving=false, terminating, the kubelet's
// report of the exit and the requests served, a row per load kind.
func writePods(b *strings.Builder, res *Result, wide bool) error {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	if wide {
		fmt.Fprintln(tw, "STRATEGY\tLOAD\tPOD\tIP\tDELETED\tSIGTERM\tREADY=F\tSERVING=F\tTERMINATING\tRULES GONE\tLAST REQ\tDONE\tEXITED\tDRAIN\tSERVED\tFAILED")
		for _, s := range res.Strategies {
			for _, p := range s.Pods {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\n", res.label(s.Strategy), s.Load, p.Pod, p.IP,
					at(p.DeletedMS), at(p.SIGTERMMS), at(p.NotReadyMS), at(p.NotServingMS), at(p.TerminatingMS),
					at(p.RulesGoneMS), at(p.LastRequestMS), at(p.DoneMS), at(p.ExitedMS), secs(p.DrainMS), p.Served, p.Failed)
			}
		}
	} else {
		fmt.Fprintln(tw, "STRATEGY\tPOD\tDELETED\tSIGTERM\tREADY=F\tRULES GONE\tLAST REQ\tDONE\tDRAIN\tFAILED")
		for _, r := range res.podRows() {
			p := r.pod
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", res.label(r.strategy), p.Pod,
				at(p.DeletedMS), at(p.SIGTERMMS), at(p.NotReadyMS), at(p.RulesGoneMS), at(p.LastRequestMS), at(p.DoneMS), secs(p.DrainMS), p.Failed)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	rules := "RULES GONE kube-proxy's rules without it;"
	if !res.RulesRead {
		rules = "RULES GONE kube-proxy's rules without it (not read: run the drill as root on the node);"
	}
	parts := []string{"columns, seconds from the strategy's `kubectl rollout restart`:"}
	if wide {
		parts = append(parts, "LOAD the load kind of LAST REQ, SERVED and FAILED; IP the pod's address;")
	}
	parts = append(parts, "DELETED the pod's deletion (its preStop hook starts); SIGTERM the kubelet's SIGTERM (the service's log line);",
		"READY=F the EndpointSlice's ready=false;")
	if wide {
		parts = append(parts, "SERVING=F, TERMINATING its serving=false and terminating;")
	}
	parts = append(parts, rules, "LAST REQ when the last request it answered was sent;", "DONE the process's end (its last log line);")
	if wide {
		parts = append(parts, "EXITED the kubelet's report of the exit;")
	}
	parts = append(parts, "DRAIN the deletion to the process's end;")
	if wide {
		parts = append(parts, "SERVED the requests it answered; FAILED the failures laid on it (see docs/drill.md); - where not seen.")
	} else {
		parts = append(parts, "FAILED the failures laid on it (see docs/drill.md), LAST REQ the latest, through every load kind; - where not seen.",
			"--wide adds IP, SERVING=F, TERMINATING, EXITED and SERVED, a row per load kind.")
	}
	b.WriteString(textwidth.Legend(parts))
	return nil
}

// podRow is an old pod in the default pods table: its instants, with its
// failures summed and its last request the latest over the strategy's
// load kinds.
type podRow struct {
	strategy string
	pod      PodResult
}

// podRows are the old pods of res, a row each, in the order of
// res.Strategies (a strategy's pods are the same through each load kind;
// the first result of a strategy lists them).
func (res *Result) podRows() []podRow {
	var rows []podRow
	first := map[string]int{} // strategy → index in rows of its first pod
	for _, s := range res.Strategies {
		i, seen := first[s.Strategy]
		if !seen {
			first[s.Strategy] = len(rows)
			for _, p := range s.Pods {
				rows = append(rows, podRow{strategy: s.Strategy, pod: p})
			}
			continue
		}
		for _, p := range s.Pods {
			for j := i; j < len(rows) && rows[j].strategy == s.Strategy; j++ {
				r := &rows[j].pod
				if r.Pod != p.Pod {
					continue
				}
				r.Failed += p.Failed
				if p.LastRequestMS != nil && (r.LastRequestMS == nil || *p.LastRequestMS > *r.LastRequestMS) {
					r.LastRequestMS = p.LastRequestMS
				}
			}
		}
	}
	return rows
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
