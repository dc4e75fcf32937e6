// Command testprogress prints what `go test -json` reports as a line per
// package the moment the package finishes, for `make race`: without -json,
// `go test` with several packages prints each package's result only after
// every package listed before it has finished, so one slow package (the
// drills of cmd/drainkit) hides all progress for minutes.
//
// It reads the JSON events on standard input and prints, per package, "ok"
// or "FAIL" with its time, as `go test` would (nothing for a package without
// tests); a failed package's output (and a package's build errors) come
// before its line. It exits 1 when a
// package failed or the input was not test JSON, so that a pipeline run
// with pipefail fails as `go test` would.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	failed, err := report(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		os.Exit(1)
	}
	if failed {
		os.Exit(1)
	}
}

// event is the part of a test2json event (go doc test2json) report reads.
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	Elapsed    float64
	ImportPath string // build output events (Go 1.24)
}

// report copies the per-package results of the events on r to w and
// reports whether a package failed.
func report(r io.Reader, w io.Writer) (failed bool, err error) {
	out := map[string][]string{} // each package's output so far
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil {
			// go test prints some errors (a pattern matching nothing)
			// as plain text: pass them on.
			fmt.Fprintf(w, "%s\n", line)
			continue
		}
		pkg := e.Package
		switch e.Action {
		case "output", "build-output":
			if pkg == "" {
				pkg = e.ImportPath
			}
			out[pkg] = append(out[pkg], e.Output)
		case "build-fail":
			failed = true
			fmt.Fprint(w, joined(out[e.ImportPath]))
			delete(out, e.ImportPath)
		case "skip":
			delete(out, pkg) // a package without tests: nothing to say
		case "pass", "fail":
			if e.Test != "" {
				continue
			}
			word := "ok  "
			if e.Action == "fail" {
				failed = true
				word = "FAIL"
				fmt.Fprint(w, joined(out[pkg]))
			}
			fmt.Fprintf(w, "%s\t%s\t%.3fs\n", word, pkg, e.Elapsed)
			delete(out, pkg)
		}
	}
	return failed, sc.Err()
}

func joined(lines []string) string { return strings.Join(lines, "") }
