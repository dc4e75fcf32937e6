package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// readmeModule writes README.md's "Use" program into a fresh module that
// replaces github.com/drainkit/drainkit with this checkout, as a new user
// would (go.sum from the checkout, so that only the module cache is read),
// and returns its directory and the go command's environment.
func readmeModule(t *testing.T) (dir string, env []string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, use, _ := strings.Cut(string(readme), "\n## Use\n")
	_, block, ok := strings.Cut(use, "```go\n")
	block, _, ok2 := strings.Cut(block, "```\n")
	if !ok || !ok2 {
		t.Fatal(`README.md's "Use" section has no complete go block`)
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goLine := ""
	for _, l := range strings.Split(string(gomod), "\n") {
		if v, ok := strings.CutPrefix(l, "go "); ok {
			goLine = strings.TrimSpace(v)
		}
	}
	if goLine == "" {
		t.Fatal("go.mod has no go line")
	}
	dir = t.TempDir()
	mod := "module example.com/readme\n\ngo " + goLine + "\n\nrequire github.com/drainkit/drainkit v0.0.0\n\nreplace github.com/drainkit/drainkit => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"main.go": block, "go.mod": mod, "go.sum": string(sum)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "GOTOOLCHAIN=local")
	return dir, env
}

// goCmd runs the go command in dir and returns its output.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		gobin = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	cmd := exec.Command(gobin, args...)
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// TestReadmeProgramDeps: the README program's dependency closure has
// nothing from Consul, gRPC or OpenTelemetry.
func TestReadmeProgramDeps(t *testing.T) {
	dir, env := readmeModule(t)
	deps := goCmd(t, dir, env, "list", "-deps", ".")
	for _, p := range strings.Fields(deps) {
		for _, heavy := range []string{"github.com/hashicorp/", "google.golang.org/grpc", "go.opentelemetry.io/"} {
			if strings.HasPrefix(p, heavy) {
				t.Errorf("the README program links %s", p)
			}
		}
	}
	t.Logf("%d packages in the closure", len(strings.Fields(deps)))
}

// TestReadmeProgramPassesDrill: the README program, built in a fresh module,
// passes `drainkit drill --exec` unmodified: exit 0, no failed request.
func TestReadmeProgramPassesDrill(t *testing.T) {
	dir, env := readmeModule(t)
	bin := filepath.Join(dir, "readme")
	goCmd(t, dir, env, "build", "-o", bin, ".")
	r := drainkit(t, 2*time.Minute, []string{"DRAINKIT_PROPAGATION_MIN=1s"},
		"drill", "--json", "--exec", bin, "--replicas", "2", "--baseline", "500ms", "--tail", "500ms")
	out := parseDrill(t, r)
	if len(out.Strategies) != 1 {
		t.Fatalf("strategies %+v, want one", out.Strategies)
	}
	if s := out.Strategies[0]; r.code != 0 || s.Failed != 0 || s.Requests == 0 || len(s.DrainSeconds) != 2 {
		t.Fatalf("exit %d, %d of %d failed, drains %v\nstderr:\n%s", r.code, s.Failed, s.Requests, s.DrainSeconds, r.stderr)
	}
}

// oldestGo is the oldest Go release drainkit supports: the two latest
// releases, as Go libraries do (Go 1.26 and 1.25); the root module's tests
// use testing/synctest.Test, new in Go 1.25.
const oldestGo = "1.25.0"

// TestGoLineIsLowest: the root module's go line is the highest go line
// among its dependencies or oldestGo, whichever is higher, and no higher,
// so that users get no newer toolchain requirement from drainkit itself.
func TestGoLineIsLowest(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	out := goCmd(t, root, append(os.Environ(), "GOWORK=off", "GOTOOLCHAIN=local"), "list", "-m", "-f", "{{.Path}} {{.GoVersion}} {{.Main}}", "all")
	var main, highest, from string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) != 3 || f[1] == "" {
			continue
		}
		if f[2] == "true" {
			main = f[1]
		} else if versionLess(highest, f[1]) {
			highest, from = f[1], f[0]
		}
	}
	want := highest
	if versionLess(want, oldestGo) {
		want, from = oldestGo, "the oldest supported Go release"
	}
	if main != want {
		t.Errorf("go.mod says go %s; want go %s (%s; the highest a dependency needs is %s)", main, want, from, highest)
	}
}

// versionLess compares Go versions such as "1.25", "1.26.0" and "1.26.7".
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(pa), len(pb)) {
		x, y := -1, -1
		if i < len(pa) {
			x = atoiOr(pa[i])
		}
		if i < len(pb) {
			y = atoiOr(pb[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

func atoiOr(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// TestReadmeSnippets: the go blocks of README.md and docs/ that show part of
// a program are parts of programs or Examples which compile (and the
// consumer's runs) in their packages' tests: each line of a block appears in
// its source file, in order.
func TestReadmeSnippets(t *testing.T) {
	for _, tc := range []struct{ doc, heading, source string }{
		{"README.md", "## Consumers", "consumer/example_test.go"},
		{"README.md", "### A worker", "workdrain/natsdrain/example_test.go"},
		{"README.md", "### gRPC", "examples/grpcservice/main.go"},
		{"docs/consumers.md", "# Consumers", "consumer/example_test.go"},
		{"docs/workers.md", "# Workers", "workdrain/natsdrain/example_test.go"},
	} {
		block := docGoBlock(t, tc.doc, tc.heading)
		source, err := os.ReadFile("../../" + tc.source)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(string(source), "\n") {
			lines = append(lines, strings.TrimSpace(l))
		}
		next := 0
		for _, want := range strings.Split(block, "\n") {
			if want = strings.TrimSpace(want); want == "" {
				continue
			}
			for next < len(lines) && lines[next] != want {
				next++
			}
			if next == len(lines) {
				t.Fatalf("%s's %q snippet line %q is not in %s (in order): update one or the other", tc.doc, tc.heading, want, tc.source)
			}
			next++
		}
	}
}

// docGoBlock returns the first go block of the section of doc (a path
// relative to the repository's root) under heading, a whole heading line
// such as "## Consumers"; the section ends at the next heading of level 2 or 3.
func docGoBlock(t *testing.T, doc, heading string) string {
	t.Helper()
	b, err := os.ReadFile("../../" + doc)
	if err != nil {
		t.Fatal(err)
	}
	text := "\n" + string(b)
	_, sec, ok := strings.Cut(text, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("%s has no %q section", doc, heading)
	}
	for _, next := range []string{"\n## ", "\n### "} {
		sec, _, _ = strings.Cut(sec, next)
	}
	_, block, ok := strings.Cut(sec, "```go\n")
	block, _, ok2 := strings.Cut(block, "```\n")
	if !ok || !ok2 {
		t.Fatalf("%s's %q section has no complete go block", doc, heading)
	}
	return block
}
