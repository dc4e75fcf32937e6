package modgraph

import (
	"bufio"
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"golang.org/x/mod/semver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// rootModuleGraphLimit is issue 19's budget for a program importing only
// the root package. Viper, which the config package is to use, alone
// brings about 26 modules, so the graph without it must stay far below.
const rootModuleGraphLimit = 40

// heavy lists module path prefixes that a program importing only the root
// package must not see in its module graph: the CLI, the drill's charts,
// xDS, and the registry and messaging clients, which live in modules of
// their own.
var heavy = map[string][]string{
	"CLI":    {"github.com/spf13/cobra", "github.com/drainkit/drainkit/cmd/"},
	"charts": {"gonum.org/v1/plot", "codeberg.org/go-pdf/", "codeberg.org/go-latex/", "github.com/ajstarks/svgo", "github.com/golang/freetype"},
	"xDS":    {"github.com/envoyproxy/", "github.com/cncf/xds/", "github.com/drainkit/drainkit/consumer/grpcresolver/outlierdetection"},
	"Consul": {"github.com/hashicorp/", "github.com/drainkit/drainkit/registry/consul"},
	"etcd":   {"go.etcd.io/", "github.com/drainkit/drainkit/registry/etcd"},
	"Nacos":  {"github.com/nacos-group/", "github.com/drainkit/drainkit/registry/nacos"},
	"NATS":   {"github.com/nats-io/", "github.com/drainkit/drainkit/workdrain/natsdrain"},
}

func TestRootPackageModuleGraph(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module graph with the go command")
	}
	mods := graph(t, newProgram(t, `_ "github.com/drainkit/drainkit"`))
	t.Logf("a program importing github.com/drainkit/drainkit: %d modules in its graph:\n%s", len(mods), strings.Join(mods, "\n"))
	if len(mods) > rootModuleGraphLimit {
		t.Errorf("%d modules in the graph, want at most %d", len(mods), rootModuleGraphLimit)
	}
	for what, prefixes := range heavy {
		if m := matching(mods, prefixes); m != nil {
			t.Errorf("the graph holds %s modules: %v", what, m)
		}
	}
}

// oldPins are requirements a program importing drainkit may already have,
// each pinned at an old release, with a package of it that the program
// imports (`go mod tidy` drops a requirement no package uses).
var oldPins = []struct{ module, version, pkg string }{
	{"golang.org/x/text", "v0.3.7", "golang.org/x/text/language"}, // the example
	{"golang.org/x/net", "v0.7.0", "golang.org/x/net/html"},
	{"google.golang.org/protobuf", "v1.27.1", "google.golang.org/protobuf/proto"},
	{"go.opentelemetry.io/otel", "v1.0.0", "go.opentelemetry.io/otel/attribute"},
}

// rootTestOnly are the requirements of the root module that a program
// importing only the root package does not build: the root module's go.mod
// must list what its packages' tests import, and a program's minimal version
// selection sees that list. Each can raise a program's own requirement of
// that module to the version here, and nothing else may.
//
//   - go.uber.org/goleak: every package's TestMain (the guide's rule). The
//     root module requires v0.10.0, the oldest release, the first with
//     VerifyTestMain (all its tests use) and still finding leaks on Go
//     1.25 and 1.26: it has no go.mod, so it requires nothing, and can raise
//     a program's goleak only from below v0.10.0. (Requiring v1.1.10
//     instead raised x/sys from viper's v0.29.0 to v0.34.0; v1.2.0 and later
//     require testify v1.8.0.)
//
// httpdrain's HTTP/2 and WebSocket tests speak those protocols through the
// standard library and the few frames they need, so golang.org/x/net is no
// longer one of these.
var rootTestOnly = map[string]bool{"go.uber.org/goleak": true}

// TestRootPackageRaisesNoUnbuiltRequirement is the check that a
// program importing only the root package has no requirement raised by a
// module it does not build. A fresh module requiring oldPins and importing
// the root package keeps each pin after `go mod tidy`, unless a module whose
// packages the program builds, other than drainkit's, requires more; then it
// gets exactly that and no more. golang.org/x/text is such a case: viper's
// afero (x/text/runes, unicode/norm) and gotenv (x/text/encoding) are
// compiled into the program, and viper v1.21.0, afero v1.15.0 and locafero
// v0.11.0 require x/text v0.28.0, so the v0.3.7 becomes v0.28.0, the
// floor of the viper that config needs (on main before the split: v0.41.0,
// from grpc-go and x/net). The one other exception is rootTestOnly, which
// the test also holds to exactly that list.
func TestRootPackageRaisesNoUnbuiltRequirement(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module graph with the go command")
	}
	imports := []string{`_ "github.com/drainkit/drainkit"`}
	pins := map[string]string{}
	for _, p := range oldPins {
		imports = append(imports, `_ "`+p.pkg+`"`)
		pins[p.module] = p.version
	}
	dir := newModule(t, "package main\n\nimport (\n\t"+strings.Join(imports, "\n\t")+"\n)\n\nfunc main() {}\n", pins)

	// The modules the program builds, at their selected versions, and what
	// each of them (drainkit's aside) requires of the pinned modules.
	built := map[string]bool{}
	for _, m := range strings.Fields(string(goCmd(t, dir, "list", "-deps", "-f", "{{with .Module}}{{.Path}}@{{.Version}}{{end}}", "."))) {
		if !strings.HasPrefix(m, "github.com/drainkit/drainkit") && !strings.HasPrefix(m, "example.com/program") {
			built[m] = true
		}
	}
	var edges [][2]string
	sc := bufio.NewScanner(bytes.NewReader(goCmd(t, dir, "mod", "graph")))
	for sc.Scan() {
		if from, to, ok := strings.Cut(sc.Text(), " "); ok && built[from] {
			edges = append(edges, [2]string{from, to})
		}
	}
	// The root module's requirements the program does not build.
	var root struct {
		Require []struct{ Path, Version string }
	}
	if err := json.Unmarshal(goCmd(t, repoRoot(t), "mod", "edit", "-json"), &root); err != nil {
		t.Fatal(err)
	}
	builtPath := map[string]bool{} // for the root package, not the pins
	for _, m := range strings.Fields(string(goCmd(t, dir, "list", "-deps", "-f", "{{with .Module}}{{.Path}}{{end}}", "github.com/drainkit/drainkit"))) {
		builtPath[m] = true
	}
	var unbuilt []string
	want := maps.Clone(pins)
	why := map[string]string{}
	testOnly := map[string]bool{} // raised by drainkit's tests: what they require excuses nothing
	for _, r := range root.Require {
		if builtPath[r.Path] {
			continue
		}
		unbuilt = append(unbuilt, r.Path)
		if !rootTestOnly[r.Path] {
			t.Errorf("the root module requires %s %s, which a program importing only the root package does not build: it raises that program's own requirement of it", r.Path, r.Version)
		} else if want[r.Path] != "" && semver.Compare(r.Version, want[r.Path]) > 0 {
			want[r.Path], why[r.Path], testOnly[r.Path] = r.Version, "the root module's tests (rootTestOnly)", true
		}
	}
	if len(unbuilt) != len(rootTestOnly) {
		t.Errorf("the root module's requirements not built by the program: %v, want those of rootTestOnly: keep the list exact", unbuilt)
	}
	// A pinned module counts as a raiser only at the version it may have,
	// and not when drainkit's tests raised it: x/net raised to v0.58.0 would
	// otherwise excuse the x/text it requires. Hence a fixpoint, as in
	// minimal version selection.
	for changed := true; changed; {
		changed = false
		for _, e := range edges {
			fromPath, fromV, _ := strings.Cut(e[0], "@")
			path, v, _ := strings.Cut(e[1], "@")
			if want[path] == "" || (want[fromPath] != "" && (want[fromPath] != fromV || testOnly[fromPath])) || semver.Compare(v, want[path]) <= 0 {
				continue
			}
			want[path], why[path], changed = v, e[0]+", which the program builds", true
		}
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(goCmd(t, dir, "list", "-m", "all"))), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && pins[f[0]] != "" {
			got[f[0]] = f[1]
		}
	}
	for _, p := range oldPins {
		if why[p.module] != "" {
			t.Logf("%s: pinned at %s, raised to %s by %s", p.module, p.version, want[p.module], why[p.module])
		}
		if got[p.module] != want[p.module] {
			t.Errorf("%s: pinned at %s, selected %s after go mod tidy, want %s: a module the program does not build raised it (go mod graph in %s)",
				p.module, p.version, got[p.module], want[p.module], dir)
		}
	}
}

func TestRegistryPluginModuleGraph(t *testing.T) {
	if testing.Short() {
		t.Skip("builds module graphs with the go command")
	}
	for _, c := range []struct{ plugin, pays string }{
		{"registry/consul", "Consul"},
		{"registry/etcd", "etcd"},
	} {
		t.Run(c.pays, func(t *testing.T) {
			mods := graph(t, newProgram(t, `_ "github.com/drainkit/drainkit/`+c.plugin+`"`))
			t.Logf("a program importing %s: %d modules in its graph", c.plugin, len(mods))
			if matching(mods, heavy[c.pays]) == nil {
				t.Errorf("no %s module in the graph of a program importing %s: the check would pass vacuously", c.pays, c.plugin)
			}
			// Not "xDS": grpc-go's own go.mod requires envoy's modules, so
			// they are in the graph of every program that uses grpc-go, as
			// etcd's client does (they are not built unless imported).
			for _, what := range []string{"Consul", "etcd", "Nacos", "NATS", "CLI", "charts"} {
				if what == c.pays {
					continue
				}
				if m := matching(mods, heavy[what]); m != nil {
					t.Errorf("a program importing %s pays for %s: %v", c.plugin, what, m)
				}
			}
		})
	}
}

// resolverWeightLimit: consumer/grpcresolver (without its opt-in outlier
// detection) may add at most 10 % to a plain grpc-go client's binary.
const resolverWeightLimit = 1.10

func TestGRPCResolverBinaryWeight(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three gRPC clients")
	}
	const plain = `package main

import (
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	_ "google.golang.org/grpc/health"
)

func main() {
	c, err := grpc.NewClient("dns:///localhost:1", grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err == nil {
		c.Close()
	}
}
`
	const resolver = `package main

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/drainkit/drainkit/consumer/grpcresolver"
	"github.com/drainkit/drainkit/registry"
	OPTIN
)

func main() {
	b, err := grpcresolver.NewBuilder(grpcresolver.Options{Source: func(string) (registry.Source, error) {
		return registry.SourceFunc(func(ctx context.Context, _ func(registry.View)) error { <-ctx.Done(); return ctx.Err() }), nil
	}})
	if err != nil {
		panic(err)
	}
	c, err := grpc.NewClient("drainkit:///orders", append(grpcresolver.DialOptions(b), grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err == nil {
		c.Close()
	}
}
`
	const optIn = `_ "github.com/drainkit/drainkit/consumer/grpcresolver/outlierdetection"`
	base := build(t, newModule(t, plain))
	with := build(t, newModule(t, strings.Replace(resolver, "OPTIN", "", 1)))
	t.Logf("plain grpc-go client %.1f MB; with grpcresolver %.1f MB (x%.3f)", mb(base), mb(with), float64(with)/float64(base))
	if float64(with) > resolverWeightLimit*float64(base) {
		t.Errorf("grpcresolver makes a gRPC client %.3f times as large, want at most %.2f", float64(with)/float64(base), resolverWeightLimit)
	}
	// The opt-in must still carry what it is for: if grpc-go ever registers
	// outlier detection without xDS, the package and its cost can go. What
	// it links is read from the package list, not from a build: compiling
	// xDS, which nothing else in `make test` builds without -race, took
	// most of this package's time on a fresh machine, for a log line.
	outlier := goCmd(t, newModule(t, strings.Replace(resolver, "OPTIN", optIn, 1)), "list", "-deps", ".")
	if xds := xdsPackage.FindAll(outlier, -1); len(xds) == 0 {
		t.Logf("outlierdetection links no xDS package now: see whether grpc-go registers the balancer without xds")
	} else {
		t.Logf("with grpcresolver/outlierdetection the client links %d xDS packages (grpc-go's, envoy's, cncf's)", len(xds))
	}
}

// xdsPackage matches, in `go list -deps` output, a package of grpc-go's
// xDS or of the xDS API modules it brings (envoy's and cncf's).
var xdsPackage = regexp.MustCompile(`(?m)^(google\.golang\.org/grpc/(internal/)?xds|github\.com/envoyproxy/|github\.com/cncf/xds/)`)

func mb(n int64) float64 { return float64(n) / 1e6 }

// repoRoot is the checkout's root: the directory of go.work above this
// package.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.work")); err != nil {
		t.Fatalf("no go.work at %s: %v", dir, err)
	}
	return dir
}

var useLine = regexp.MustCompile(`(?m)^\s*(?:use\s+)?(\.[^\s)]*)\s*$`)

// localModules maps each module of go.work to its directory.
func localModules(t *testing.T) map[string]string {
	t.Helper()
	root := repoRoot(t)
	work, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	mods := map[string]string{}
	for _, m := range useLine.FindAllStringSubmatch(string(work), -1) {
		dir := filepath.Join(root, m[1])
		gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		path := regexp.MustCompile(`(?m)^module\s+(\S+)`).FindSubmatch(gomod)
		if path == nil {
			t.Fatalf("%s/go.mod names no module", dir)
		}
		mods[string(path[1])] = dir
	}
	if len(mods) < 2 {
		t.Fatalf("go.work lists %d modules: %v", len(mods), mods)
	}
	return mods
}

// newProgram returns the directory of a fresh module whose main package
// imports imports (Go import specs, one per line).
func newProgram(t *testing.T, imports ...string) string {
	return newModule(t, "package main\n\nimport (\n\t"+strings.Join(imports, "\n\t")+"\n)\n\nfunc main() {}\n")
}

// newModule writes a module example.com/program with main.go = src and the
// given requirements (module path to version), replacing every drainkit
// module with its directory in this checkout, and runs `go mod tidy` in it.
func newModule(t *testing.T, src string, require ...map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	var mod strings.Builder
	mod.WriteString("module example.com/program\n\ngo 1.25.0\n\n")
	for _, r := range require {
		for path, v := range r {
			mod.WriteString("require " + path + " " + v + "\n")
		}
	}
	for path, d := range localModules(t) {
		mod.WriteString("replace " + path + " => " + d + "\n")
	}
	writeModule(t, dir, mod.String(), src)
	goCmd(t, dir, "mod", "tidy")
	return dir
}

// writeModule writes go.mod, main.go and a go.sum into dir. The go.sum
// starts from the checkout's, so that no checksum the checkout already has
// is fetched again.
func writeModule(t *testing.T, dir, gomod, src string) {
	t.Helper()
	var sum bytes.Buffer
	sums, _ := filepath.Glob(filepath.Join(repoRoot(t), "*", "go.sum"))
	more, _ := filepath.Glob(filepath.Join(repoRoot(t), "*", "*", "*", "go.sum"))
	for _, f := range append(append(sums, more...), filepath.Join(repoRoot(t), "go.sum"), filepath.Join(repoRoot(t), "go.work.sum")) {
		b, err := os.ReadFile(f)
		if err == nil {
			sum.Write(b)
		}
	}
	for name, data := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum.Bytes(), "main.go": []byte(src)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// graph returns the modules (paths, each once) in dir's `go mod graph`,
// without the program's own module and the go and toolchain entries.
func graph(t *testing.T, dir string) []string {
	t.Helper()
	out := goCmd(t, dir, "mod", "graph")
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		for _, node := range strings.Fields(sc.Text()) {
			path, _, _ := strings.Cut(node, "@")
			if path != "example.com/program" && path != "go" && path != "toolchain" {
				seen[path] = true
			}
		}
	}
	mods := make([]string, 0, len(seen))
	for m := range seen {
		mods = append(mods, m)
	}
	slices.Sort(mods)
	return mods
}

// build compiles dir's program and returns the binary's size in bytes.
func build(t *testing.T, dir string) int64 {
	t.Helper()
	goCmd(t, dir, "build", "-o", "program")
	fi, err := os.Stat(filepath.Join(dir, "program"))
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func matching(mods, prefixes []string) []string {
	var m []string
	for _, mod := range mods {
		for _, p := range prefixes {
			if strings.HasPrefix(mod, p) {
				m = append(m, mod)
				break
			}
		}
	}
	return m
}

// goCmd runs the go command in dir outside the workspace, as a program
// depending on drainkit would, and returns its standard output.
func goCmd(t *testing.T, dir string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, stderr.Bytes())
	}
	return out
}
