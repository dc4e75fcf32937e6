package modgraph

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// checkoutImports are the drainkit modules the program of
// TestCheckoutRecipe imports a package of, and so replaces (issue 33 item 3):
// every library module a program may require.
var checkoutImports = []string{
	"",          // github.com/drainkit/drainkit
	"/consumer", // and, below, a package of each of the others
	"/consumer/grpcresolver",
	"/grpcdrain",
	"/registry/consul",
	"/registry/etcd",
	"/registry/nacos",
	"/telemetry",
	"/workdrain/natsdrain",
}

// TestCheckoutRecipe is the recipe for using drainkit from a checkout before
// a release, as a program outside the repository does: its go.mod has one
// replace per drainkit module it imports (nothing else: no requirement, no
// replace of a test harness), and `go mod tidy` and `go build` work with the
// go command's defaults (GOWORK=off, as outside the repository; the module
// proxy for everything else; GOTOOLCHAIN=local). No drainkit module other
// than those imported may be in its module graph: in particular no module
// that exists for drainkit's tests (until issue 33, registry/etcd's tests
// imported the module internal/etcdtest, registry/consul's
// internal/consultest, grpcdrain's internal/loadtest, and `go mod tidy`
// failed fetching them; registry/nacos required the examples module for
// its test child, so every program using Nacos had it in its graph).
func TestCheckoutRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go mod tidy and go build")
	}
	const base = "github.com/drainkit/drainkit"
	checkout := repoRoot(t)
	var gomod, imports strings.Builder
	gomod.WriteString("module example.com/program\n\ngo 1.25.0\n\n")
	want := []string{}
	for _, m := range checkoutImports {
		gomod.WriteString("replace " + base + m + " => " + filepath.Join(checkout, filepath.FromSlash(m)) + "\n")
		imports.WriteString("\t_ \"" + base + m + "\"\n")
		want = append(want, base+m)
	}
	dir := t.TempDir()
	writeModule(t, dir, gomod.String(), "package main\n\nimport (\n"+imports.String()+")\n\nfunc main() {}\n")
	goCmd(t, dir, "mod", "tidy")
	goCmd(t, dir, "build", "-o", filepath.Join(dir, "program"), ".")

	var got []string
	for _, m := range graph(t, dir) {
		if m == base || strings.HasPrefix(m, base+"/") {
			got = append(got, m)
		}
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("drainkit modules in the program's graph:\n\t%s\nwant those it imports and replaces:\n\t%s",
			strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
	}
}
