package modgraph

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// checkoutRecipe is the section of docs/modules.md that says how to use
// drainkit from a checkout before a release (issue 33 item 3): three sh
// blocks, the definitions (the checkout D, the placeholder P, the library
// MODULES), the go.mod recipe and the workspace recipe.
type checkoutRecipe struct {
	defs, gomod, work string
	modules           []string // MODULES, as the shell splits it
}

const (
	base        = "github.com/drainkit/drainkit"
	docCheckout = "/path/to/drainkit"
)

var (
	shBlock      = regexp.MustCompile("(?s)```sh\n(.*?)```")
	modulesVar   = regexp.MustCompile(`(?s)\bMODULES="([^"]*)"`)
	workUse      = regexp.MustCompile(`(?m)^go work use [^#\n]*`)
	genprotoLine = regexp.MustCompile(`(?m)^\s*replace google\.golang\.org/genproto => (\S+) (\S+)\s*$`)
)

// readCheckoutRecipe parses the recipe out of docs/modules.md, so that the
// test runs what the page says and the two cannot drift apart.
func readCheckoutRecipe(t *testing.T) checkoutRecipe {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "modules.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Using drainkit from a checkout\n")
	if !ok {
		t.Fatal(`docs/modules.md has no section "## Using drainkit from a checkout"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var r checkoutRecipe
	for _, b := range shBlock.FindAllStringSubmatch(section, -1) {
		switch body := b[1]; {
		case modulesVar.MatchString(body):
			r.defs = body
		case strings.Contains(body, "go mod edit -replace"):
			r.gomod = body
		case strings.Contains(body, "go work init"):
			r.work = body
		}
	}
	if r.defs == "" || r.gomod == "" || r.work == "" {
		t.Fatalf("docs/modules.md's checkout section lacks a sh block: definitions (MODULES=) found %t, go.mod recipe (go mod edit -replace) %t, workspace recipe (go work init) %t",
			r.defs != "", r.gomod != "", r.work != "")
	}
	if !strings.Contains(r.defs, docCheckout) {
		t.Fatalf("the definitions block names no checkout %s:\n%s", docCheckout, r.defs)
	}
	if !workUse.MatchString(r.work) {
		t.Fatalf("the workspace recipe has no line starting `go work use`:\n%s", r.work)
	}
	r.modules = strings.Fields(modulesVar.FindStringSubmatch(r.defs)[1])
	return r
}

// libraryModules are the modules of the checkout that a program may import:
// every go.mod of the repository except the commands (cmd/), examples,
// benchmarks, tools and any module with an internal path element.
func libraryModules(t *testing.T) []string {
	t.Helper()
	root := repoRoot(t)
	var mods []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.Name() != "go.mod" {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		elems := strings.Split(rel, "/")
		if slices.Contains([]string{"cmd", "examples", "bench", "tools"}, elems[0]) || slices.Contains(elems, "internal") {
			return nil
		}
		gomod, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		m := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(gomod)
		if m == nil {
			t.Fatalf("%s names no module", path)
		}
		want := base
		if rel != "." {
			want += "/" + rel
		}
		if string(m[1]) != want {
			t.Errorf("%s: module %s, want %s (the recipe derives each module's directory from its path)", path, m[1], want)
		}
		mods = append(mods, string(m[1]))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(mods)
	return mods
}

// TestCheckoutRecipe runs docs/modules.md's recipe for using drainkit from
// a checkout before a release as a program outside the repository does:
// for each library module, a fresh module under t.TempDir whose program
// imports only that module's package, built once by the go.mod recipe
// (replaces, then `go mod tidy` and `go build` with GOWORK=off) and once by
// the workspace recipe (`go work use` of that module alone), the blocks run
// by sh as written but for the checkout's path and the `go work use`
// arguments. The go command keeps the environment's GOPROXY, GOMODCACHE and
// GOCACHE: a drainkit module the recipe does not replace is fetched from the
// proxy, which has none, and the build fails. Until this test, the recipe
// replaced only the modules a program imports, and a program importing
// registry/etcd failed: registry/etcd's go.mod requires consumer and
// consumer/grpcresolver for its tests (scheme_test.go), at the placeholder.
func TestCheckoutRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go mod tidy and go build")
	}
	r := readCheckoutRecipe(t)
	lib := libraryModules(t)
	if got := slices.Sorted(slices.Values(r.modules)); !slices.Equal(got, lib) {
		t.Fatalf("docs/modules.md's MODULES:\n\t%s\nwant the repository's library modules:\n\t%s",
			strings.Join(got, "\n\t"), strings.Join(lib, "\n\t"))
	}
	checkGenprotoLine(t, r.work)
	checkout := repoRoot(t)
	defs := strings.ReplaceAll(r.defs, docCheckout, checkout)
	for _, m := range lib {
		sub := strings.TrimPrefix(m, base)
		name := strings.TrimPrefix(sub, "/")
		if name == "" {
			name = "root"
		}
		src := "package main\n\nimport _ \"" + m + "\"\n\nfunc main() {}\n"
		t.Run("gomod/"+name, func(t *testing.T) {
			t.Parallel()
			runRecipe(t, defs+r.gomod, src, "GOWORK=off", "GOFLAGS=-mod=mod")
		})
		t.Run("work/"+name, func(t *testing.T) {
			t.Parallel()
			// -mod=mod is refused in workspace mode.
			runRecipe(t, defs+workUse.ReplaceAllLiteralString(r.work, `go work use "$D`+sub+`" `), src, "GOWORK=", "GOFLAGS=")
		})
	}
}

// checkGenprotoLine holds the workspace recipe's genproto replacement to
// the one in the repository's go.work, which the repository builds with.
func checkGenprotoLine(t *testing.T, work string) {
	t.Helper()
	gowork, err := os.ReadFile(filepath.Join(repoRoot(t), "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	g := genprotoLine.FindSubmatch(gowork)
	if g == nil {
		t.Fatal("go.work has no `replace google.golang.org/genproto => ...` line")
	}
	want := "go work edit -replace google.golang.org/genproto=" + string(g[1]) + "@" + string(g[2])
	if !strings.Contains(work, want+"\n") {
		t.Errorf("the workspace recipe in docs/modules.md lacks the line\n\t%s\n(go.work's genproto replacement)", want)
	}
}

// runRecipe writes ./myservice (go 1.25.0, main.go = src) in a fresh
// directory and runs script there with sh -e, the go command with
// GOTOOLCHAIN=local and env added to the test's environment.
func runRecipe(t *testing.T, script, src string, env ...string) {
	t.Helper()
	dir := t.TempDir()
	svc := filepath.Join(dir, "myservice")
	if err := os.Mkdir(svc, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"go.mod": "module example.com/program\n\ngo 1.25.0\n", "main.go": src} {
		if err := os.WriteFile(filepath.Join(svc, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("sh", "-e", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"GOTOOLCHAIN=local"}, env...)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the recipe failed (%v) in %s:\n%s\noutput:\n%s", err, dir, script, out.Bytes())
	}
}
