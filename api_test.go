package drainkit_test

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updateAPI = flag.Bool("update", false, "rewrite testdata/api/*.txt from the exported names of the packages")

// apiLimits caps the exported surface of packages that had grown past what
// their job needs (issue 19).
var apiLimits = map[string]int{"lifecycle": 60}

// TestAPI compares every public package's exported names (top-level funcs,
// types, consts, vars, and the exported methods of exported types, in
// non-test files) with testdata/api/<dir>.txt, so that adding or removing a
// name is a deliberate change of that list. Packages of the nested modules
// (registry/nacos, workdrain/natsdrain) are read from source too; internal,
// testdata, examples, tools, bench and main packages are not public API. `go test -run TestAPI
// -update .` rewrites the lists.
func TestAPI(t *testing.T) {
	pkgs := exportedNames(t, ".")
	if len(pkgs) == 0 {
		t.Fatal("no packages found")
	}
	dir := filepath.Join("testdata", "api")
	if *updateAPI {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for pkg, names := range pkgs {
		file := filepath.Join(dir, apiFile(pkg))
		seen[filepath.Base(file)] = true
		want := strings.Join(names, "\n") + "\n"
		if limit, ok := apiLimits[pkg]; ok && len(names) > limit {
			t.Errorf("%s: %d exported identifiers, at most %d allowed", pkg, len(names), limit)
		}
		if *updateAPI {
			if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("%s: no API list (%v); run go test -run TestAPI -update . and review the new file", pkg, err)
			continue
		}
		if added, removed := diffLines(string(got), want); len(added)+len(removed) > 0 {
			t.Errorf("%s: exported names changed without %s: added %q, removed %q; run go test -run TestAPI -update . to accept",
				pkg, file, added, removed)
		}
	}
	if *updateAPI {
		return
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.txt"))
	for _, f := range files {
		if !seen[filepath.Base(f)] {
			t.Errorf("%s lists a package that no longer exists; run go test -run TestAPI -update .", f)
		}
	}
}

// apiFile names a package's list: its directory with "/" as "_", "root"
// for the module's root package.
func apiFile(pkg string) string {
	if pkg == "." {
		return "root.txt"
	}
	return strings.ReplaceAll(pkg, "/", "_") + ".txt"
}

// exportedNames parses the non-test Go files under root and returns, by
// package directory, the sorted exported names as "kind Name" lines.
func exportedNames(t *testing.T, root string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		base := d.Name()
		if path != root && (base == "internal" || base == "testdata" || base == "examples" || base == "tools" || base == "bench" || strings.HasPrefix(base, ".") || strings.HasPrefix(base, "_")) {
			return filepath.SkipDir
		}
		names, ok, err := packageNames(path)
		if err != nil {
			return err
		}
		if ok {
			out[filepath.ToSlash(path)] = names
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// packageNames returns the exported names of the library package in dir;
// ok is false when dir holds no such package (no Go files, or package main).
func packageNames(dir string) (names []string, ok bool, err error) {
	fset := token.NewFileSet()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, false, err
	}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, false, err
		}
		if f.Name.Name == "main" || hasIgnoreTag(f) {
			continue
		}
		ok = true
		names = append(names, fileNames(f)...)
	}
	slices.Sort(names)
	return slices.Compact(names), ok, nil
}

// hasIgnoreTag reports a file excluded from every build (//go:build ignore).
func hasIgnoreTag(f *ast.File) bool {
	for _, g := range f.Comments {
		for _, c := range g.List {
			if c.Text == "//go:build ignore" {
				return true
			}
		}
	}
	return false
}

func fileNames(f *ast.File) []string {
	var names []string
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				names = append(names, "func "+d.Name.Name)
			} else if recv := recvType(d.Recv.List[0].Type); ast.IsExported(recv) {
				names = append(names, "method "+recv+"."+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() {
						names = append(names, "type "+s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() {
							names = append(names, d.Tok.String()+" "+n.Name)
						}
					}
				}
			}
		}
	}
	return names
}

// recvType returns the name of a method's receiver type: T for T, *T, T[P]
// and *T[P].
func recvType(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// diffLines returns the lines only in want (added) and only in got (removed).
func diffLines(got, want string) (added, removed []string) {
	g := strings.Split(strings.TrimSpace(got), "\n")
	w := strings.Split(strings.TrimSpace(want), "\n")
	for _, l := range w {
		if !slices.Contains(g, l) {
			added = append(added, l)
		}
	}
	for _, l := range g {
		if !slices.Contains(w, l) {
			removed = append(removed, l)
		}
	}
	return added, removed
}
