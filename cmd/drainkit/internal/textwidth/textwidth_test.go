package textwidth

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Fit breaks at spaces within the width, indents continuations by hang
// past the line's own indentation, keeps a word longer than a line whole
// and leaves everything alone at width 0.
func TestFit(t *testing.T) {
	long := strings.Repeat("x", 30)
	for _, c := range []struct {
		name, in    string
		width, hang int
		want        string
	}{
		{"fits", "aaa bbb", 7, 2, "aaa bbb"},
		{"breaks", "aaa bbb ccc", 7, 2, "aaa bbb\n  ccc"},
		{"indented", "  aaa bbb ccc", 9, 2, "  aaa bbb\n    ccc"},
		{"long word", "aa " + long + " bb", 10, 0, "aa\n" + long + "\nbb"},
		{"trailing spaces", "aaa bbb   ", 7, 0, "aaa bbb   "},
		{"lines", "aaa bbb\nccc ddd eee", 7, 1, "aaa bbb\nccc ddd\n eee"},
		{"no limit", "aaa bbb ccc", 0, 2, "aaa bbb ccc"},
	} {
		if got := Fit(c.in, c.width, c.hang); got != c.want {
			t.Errorf("%s: Fit(%q, %d, %d) = %q, want %q", c.name, c.in, c.width, c.hang, got, c.want)
		}
	}
}

// Legend is one paragraph of lines of at most Columns runes, apart from
// the table above it.
func TestLegend(t *testing.T) {
	parts := make([]string, 40)
	for i := range parts {
		parts[i] = "COLUMN the column's meaning;"
	}
	got := Legend(parts)
	if !strings.HasPrefix(got, "\n") || !strings.HasSuffix(got, "\n") {
		t.Errorf("legend %q: want it between newlines", got)
	}
	lines := strings.Split(strings.Trim(got, "\n"), "\n")
	if len(lines) < 2 {
		t.Errorf("legend of %d parts in %d line(s): want it broken", len(parts), len(lines))
	}
	for _, l := range lines {
		if len(l) > Columns {
			t.Errorf("legend line of %d columns > %d: %q", len(l), Columns, l)
		}
	}
}
