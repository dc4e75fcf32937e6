// Package textwidth fits drainkit's text output to a terminal (issue 33):
// the width the drill's reports keep to and the line breaking of their
// prose. It is its own package, with only the standard library, so that
// both drills' reports (internal/drill and internal/kubedrill) share it
// without linking each other.
package textwidth

import (
	"strings"
	"unicode/utf8"
)

// Columns is the width, in runes, that the drills' default text output
// fits: a terminal's usual width and a CI log's. Their --wide lifts it:
// every column of every table, and no line broken.
const Columns = 120

// Hang is how far past its line's own indentation the drills' text output
// indents a broken line's continuation, so that it reads as part of the
// line above.
const Hang = 4

// Width is the width a report fits: Columns, or 0 (no limit) with wide
// (--wide keeps every column of every table and breaks no line).
func Width(wide bool) int {
	if wide {
		return 0
	}
	return Columns
}

// Fit breaks each line of text longer than width columns (runes) at
// spaces, keeping every other byte as it was; a continuation is indented
// hang columns past its line's own indentation, so that it reads as part
// of the line above. A word longer than a whole line (a path, a URL, a
// JSON value without spaces) stays whole on a line of its own: cut, it
// could no longer be copied. width 0 leaves text as it is.
func Fit(text string, width, hang int) string {
	if width <= 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = FitLine(l, width, hang)
	}
	return strings.Join(lines, "\n")
}

// FitLine is Fit for one line (line holds no newline).
func FitLine(line string, width, hang int) string {
	if width <= 0 || utf8.RuneCountInString(line) <= width {
		return line
	}
	indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
	cont := indent + strings.Repeat(" ", hang)
	var b strings.Builder
	rest := line
	for {
		cut := breakAt(rest, width, len(indent))
		if cut < 0 {
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString(strings.TrimRight(rest[:cut], " "))
		b.WriteString("\n")
		rest = cont + strings.TrimLeft(rest[cut:], " ")
		indent = cont
	}
}

// Legend joins the sentences of a table's legend into a paragraph of
// lines of at most Columns columns, with --wide too (the paragraph is
// read, not searched), set apart from the table by an empty line:
// "\n" + the paragraph + "\n".
func Legend(parts []string) string {
	return "\n" + FitLine(strings.Join(parts, " "), Columns, 0) + "\n"
}

// breakAt is the byte offset of the space to break s at: the last one
// within width columns past the indentation (the first byte past from),
// else the first one after a word too long to fit; -1 when s fits or has
// no such space.
func breakAt(s string, width, from int) int {
	if utf8.RuneCountInString(s) <= width {
		return -1
	}
	last, col := -1, 0
	for i, r := range s {
		if col > width {
			break
		}
		if r == ' ' && i > from {
			last = i
		}
		col++
	}
	if strings.TrimSpace(s[last+1:]) == "" {
		return -1 // only trailing spaces past the width
	}
	if last > 0 {
		return last
	}
	if i := strings.IndexByte(s[from:], ' '); i > 0 && strings.TrimSpace(s[from+i:]) != "" {
		return from + i
	}
	return -1
}
