package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// benchResult is one line of `go test -bench` output: the name without
// the -GOMAXPROCS suffix and its metrics by unit (ns/op, B/op, allocs/op,
// and custom ones such as µs-median-lag).
type benchResult struct {
	Name    string
	Metrics map[string]float64
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$`)

// parseBench reads `go test -bench` output; other lines are skipped.
func parseBench(out []byte) []benchResult {
	var res []benchResult
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		f := strings.Fields(m[3])
		r := benchResult{Name: m[1], Metrics: map[string]float64{}}
		for i := 0; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				r.Metrics[f[i+1]] = v
			}
		}
		res = append(res, r)
	}
	return res
}

// series collects, per benchmark name, its repeats of one metric, in the
// order `go test -count` ran them.
func series(res []benchResult, unit string) map[string]Sample {
	s := map[string]Sample{}
	for _, r := range res {
		if v, ok := r.Metrics[unit]; ok {
			s[r.Name] = append(s[r.Name], v)
		}
	}
	return s
}

// benchFuncs finds the packages declaring each benchmark function of names
// in the main module (skipping bench/anchors and testdata): a benchmark
// that another branch has not merged yet is simply absent.
func benchFuncs(root string, names ...string) (map[string]string, error) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	decl := regexp.MustCompile(`(?m)^func (Benchmark\w+)\(b \*testing\.B\)`)
	found := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "anchors" || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && p != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(data), -1) {
			if want[m[1]] {
				rel, _ := filepath.Rel(root, filepath.Dir(p))
				found[m[1]] = "./" + filepath.ToSlash(rel)
			}
		}
		return nil
	})
	return found, err
}

// goBench runs the named benchmark functions (those that exist) in their
// packages with -benchmem, -count and -benchtime, and returns the parsed
// results and which of names exist.
func (e *env) goBench(count int, benchtime string, names ...string) ([]benchResult, map[string]string, error) {
	found, err := benchFuncs(e.root, names...)
	if err != nil || len(found) == 0 {
		return nil, found, err
	}
	var pkgs, fns []string
	seen := map[string]bool{}
	for fn, pkg := range found {
		fns = append(fns, fn)
		if !seen[pkg] {
			pkgs, seen[pkg] = append(pkgs, pkg), true
		}
	}
	args := append([]string{"test", "-run", "^$", "-bench", "^(" + strings.Join(fns, "|") + ")$", "-benchmem",
		"-count", strconv.Itoa(count), "-benchtime", benchtime, "-timeout", "20m"}, pkgs...)
	fmt.Fprintf(os.Stderr, "benchrun: go %s\n", strings.Join(args, " "))
	cmd := exec.Command("go", args...)
	cmd.Dir = e.root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, found, fmt.Errorf("go %s: %v: %s", strings.Join(args, " "), err, tail(out.String(), 10))
	}
	return parseBench(out.Bytes()), found, nil
}

// families groups benchmark names by all their components but one, the
// variant, for families that include the variant base ("bare"): e.g.
// BenchmarkHandler/drainkit/seq belongs to BenchmarkHandler/*/seq with
// variant drainkit. It returns family -> variant -> full name.
func families(names []string, base string) map[string]map[string]string {
	fam := map[string]map[string]string{}
	for _, n := range names {
		parts := strings.Split(n, "/")
		for i := 1; i < len(parts); i++ {
			key := strings.Join(append(append(append([]string(nil), parts[:i]...), "*"), parts[i+1:]...), "/")
			if fam[key] == nil {
				fam[key] = map[string]string{}
			}
			fam[key][parts[i]] = n
		}
	}
	for k, v := range fam {
		if _, ok := v[base]; !ok || len(v) < 2 {
			delete(fam, k)
		}
	}
	return fam
}
