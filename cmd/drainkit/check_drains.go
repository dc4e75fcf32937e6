package main

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"
)

// drainsAdvice is what `check --from-drains` read and proposes: the
// evidence file's drains and the window they ask for.
type drainsAdvice struct {
	file   string
	drains []budget.DrainEvidence
	advice budget.WindowAdvice
}

// readDrainsAdvice reads the evidence under dir (propagation.evidence_dir,
// budget.EvidenceFile) and returns the window it asks for with t's
// drain.timeout and stop.timeout. No recorded caller is an error: there is
// nothing to propose from.
func readDrainsAdvice(dir string, t budget.Timings) (*drainsAdvice, error) {
	file := filepath.Join(dir, budget.EvidenceFile)
	e, err := budget.ReadWindowEvidence(dir)
	if err != nil {
		return nil, fmt.Errorf("--from-drains %s: %w", file, err)
	}
	a := e.Advice(t)
	if a == nil {
		return nil, fmt.Errorf("--from-drains %s: no drain with a caller recorded (%d drains): run the service with propagation.evidence_dir %s and drain it under load first", file, len(e.Drains), dir)
	}
	return &drainsAdvice{file: file, drains: e.Drains, advice: *a}, nil
}

// write prints the evidence, drain by drain and caller class by class,
// the proposed settings and the verdict on the current ones (t): OK when
// t's propagation.max covers every drain's need and no window was cut at
// propagation.max with a caller still due, else FAIL. The proposal never
// goes below what was measured (budget.Timings.Advise).
func (d *drainsAdvice) write(w io.Writer, t budget.Timings) verdictLevel {
	a := d.advice
	fmt.Fprintf(w, "evidence: %d drains in %s (staleness: a caller class's last request after the drain's start; need: until it had moved)\n", len(d.drains), d.file)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "drain\tstarted\twindow\tcut at max\tcaller class\tstaleness\tneed")
	for i, dr := range d.drains {
		cut := "no"
		if dr.CutAtMax {
			cut = "yes (need is a lower bound)"
		}
		classes := slices.Sorted(maps.Keys(dr.Classes))
		if len(classes) == 0 {
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t(no caller after the start)\t\t\n", i+1, dr.At.UTC().Format(time.RFC3339), ms(dr.WindowMS), cut)
		}
		for _, c := range classes {
			ce := dr.Classes[c]
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, dr.At.UTC().Format(time.RFC3339), ms(dr.WindowMS), cut, c, ms(ce.StalenessMS), ms(ce.NeedMS))
		}
	}
	_ = tw.Flush()
	how := "plus 10%"
	switch {
	case a.Capped:
		how = fmt.Sprintf("a lower bound; %d times it would pass %s, the most the evidence proposes", budget.CutFactor, budget.AdviceCeiling)
	case a.AtLeast:
		how = fmt.Sprintf("a lower bound, times %d (a ceiling above the staleness costs grace period, not drain time; one below it loses requests)", budget.CutFactor)
	}
	fmt.Fprintf(w, "propose: propagation.max %s, grace_period %s, terminationGracePeriodSeconds %d (need %s, %s, rounded up to a second; propagation.min: leave it unset, the callers' evidence holds the window and a confirmed deregistration ends it early)\n",
		a.PropagationMax, a.GracePeriod, a.TerminationGracePeriodSeconds, a.Need.Round(time.Millisecond), how)
	if a.Capped && a.Need >= budget.AdviceCeiling {
		fmt.Fprintf(w, "evidence verdict: FAIL: a caller was still due %s after a drain's start, past %s: it does not follow the registry (a pinned address, or connections that never re-resolve) and a longer window will not move it: find it in the table above and fix the caller\n",
			a.Need.Round(time.Millisecond), budget.AdviceCeiling)
		return verdictFail
	}
	if a.Capped {
		fmt.Fprintf(w, "evidence verdict: FAIL: a window was cut at propagation.max with callers still due %s after a drain's start; the proposal stops at %s, past the longest discovery caches met in practice (Eureka's server, client and Ribbon caches, about 90 s): drain again with it, and if a caller is still due at it, fix the caller (a pinned address, or connections that never re-resolve): a longer window will not move it\n",
			a.Need.Round(time.Millisecond), budget.AdviceCeiling)
		return verdictFail
	}
	if a.AtLeast {
		fmt.Fprintf(w, "evidence verdict: FAIL: a window was cut at propagation.max with callers still due, so their staleness is at least %s and may be more: set the proposal (or more) and drain again to measure the rest\n",
			a.Need.Round(time.Millisecond))
		return verdictFail
	}
	if t.PropagationMax < a.Need {
		fmt.Fprintf(w, "evidence verdict: FAIL: propagation.max %s would not have covered the last drains' callers (need %s): set the proposal\n", t.PropagationMax, a.Need.Round(time.Millisecond))
		return verdictFail
	}
	fmt.Fprintf(w, "evidence verdict: OK: propagation.max %s covers the last drains' callers (need %s)\n", t.PropagationMax, a.Need.Round(time.Millisecond))
	return verdictOK
}

// ms renders a millisecond count of the evidence file as a duration.
func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }
