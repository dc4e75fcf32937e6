package main

import (
	"os"
	"strings"
	"testing"
)

// readmeProgram returns the first ```go block of README.md's "Use" section.
func readmeProgram(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, use, ok := strings.Cut(string(b), "\n## Use\n")
	if !ok {
		t.Fatal(`README.md has no "## Use" section`)
	}
	_, block, ok := strings.Cut(use, "```go\n")
	if !ok {
		t.Fatal(`README.md's "Use" section has no go block`)
	}
	block, _, ok = strings.Cut(block, "```\n")
	if !ok {
		t.Fatal("unterminated go block in README.md")
	}
	return block
}

// TestReadmeIsThisProgram: the README's "Use" program is main.go, byte for
// byte, and at most 20 lines without its import block.
func TestReadmeIsThisProgram(t *testing.T) {
	block := readmeProgram(t)
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	if block != string(src) {
		t.Fatalf("README.md's Use block and examples/minimal/main.go differ:\n--- README\n%s\n--- main.go\n%s", block, src)
	}
	lines, inImport := 0, false
	for _, l := range strings.Split(strings.TrimRight(block, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "import ("):
			inImport = true
		case inImport:
			inImport = l != ")"
		default:
			lines++
		}
	}
	if lines > 20 {
		t.Errorf("the program has %d lines without its import block, want <= 20", lines)
	}
}
