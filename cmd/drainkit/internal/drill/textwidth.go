package drill

import (
	"strings"
	"unicode/utf8"
)

// textWidth is the columns the drill's default text report fits (issue
// 33): a terminal's usual width and a CI log's. --wide (Config.Wide) lifts
// it: every column of every table, and no line broken.
const textWidth = 120

// reportWidth is the width cfg's text report fits, 0 for no limit.
func reportWidth(cfg Config) int {
	if cfg.Wide {
		return 0
	}
	return textWidth
}

// fitLines breaks each line of text longer than width columns (runes) at
// spaces, keeping every other byte as it was; a continuation is indented
// hang columns past its line's own indentation, so that it reads as part
// of the line above. A word longer than a whole line (a path, a URL, a
// JSON value without spaces) stays whole on a line of its own: cut, it
// could no longer be copied. width 0 leaves text as it is.
func fitLines(text string, width, hang int) string {
	if width <= 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = fitLine(l, width, hang)
	}
	return strings.Join(lines, "\n")
}

// fitLine is fitLines for one line.
func fitLine(line string, width, hang int) string {
	if utf8.RuneCountInString(line) <= width {
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
