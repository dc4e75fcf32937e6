package main

import (
	"fmt"
	"strings"
	"time"
)

// Verdicts of a row.
const (
	Pass  = "PASS"
	Miss  = "MISS"
	Ran   = "ran (quick: not asserted)"
	NoTgt = "-" // a reference row: no target of its own
)

// Table is one numbered measurement: a header, rows of cells, each row
// with its target and verdict, and notes (method, baseline, what was not
// available and why).
type Table struct {
	Num     int
	Title   string
	Command string // the command that reproduces it
	Header  []string
	Rows    []Row
	Notes   []string
	Took    time.Duration
}

// Row is one line of a table.
type Row struct {
	Cells   []string
	Target  string
	Verdict string
}

// Add appends a row; quick turns PASS and MISS into Ran, since quick mode
// asserts no timing.
func (t *Table) Add(quick bool, target, verdict string, cells ...string) {
	if quick && (verdict == Pass || verdict == Miss) {
		verdict = Ran
	}
	t.Rows = append(t.Rows, Row{Cells: cells, Target: target, Verdict: verdict})
}

// Note appends a note printed under the table.
func (t *Table) Note(format string, args ...any) {
	t.Notes = append(t.Notes, fmt.Sprintf(format, args...))
}

// Misses counts MISS rows.
func (t *Table) Misses() int {
	n := 0
	for _, r := range t.Rows {
		if r.Verdict == Miss {
			n++
		}
	}
	return n
}

// Markdown renders the table.
func (t *Table) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %d. %s\n\n", t.Num, t.Title)
	if t.Command != "" {
		fmt.Fprintf(&b, "Reproduce: `%s`\n\n", t.Command)
	}
	head := append(append([]string(nil), t.Header...), "target", "verdict")
	fmt.Fprintf(&b, "| %s |\n|%s\n", strings.Join(head, " | "), strings.Repeat("---|", len(head)))
	for _, r := range t.Rows {
		cells := append(append([]string(nil), r.Cells...), r.Target, r.Verdict)
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	b.WriteString("\n")
	for _, n := range t.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	fmt.Fprintf(&b, "\n(table %d took %s)\n\n", t.Num, t.Took.Round(time.Second))
	return b.String()
}

// verdict returns Pass when ok, else Miss.
func verdict(ok bool) string {
	if ok {
		return Pass
	}
	return Miss
}
