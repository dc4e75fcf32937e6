package toolbin_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/drainkit/drainkit/internal/toolbin"
)

// TestPath: the variable wins when set; a missing file is an error naming
// it; without the variable the script runs (a missing script is an error).
func TestPath(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "server")
	if err := os.WriteFile(bin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DRAINKIT_TOOLBIN_TEST", bin)
	if p, err := toolbin.Path("toolbintest", "DRAINKIT_TOOLBIN_TEST", "no-such.sh"); err != nil || p != bin {
		t.Fatalf("Path = %q, %v; want %q", p, err, bin)
	}
	t.Setenv("DRAINKIT_TOOLBIN_TEST", bin+".missing")
	if _, err := toolbin.Path("toolbintest", "DRAINKIT_TOOLBIN_TEST", "no-such.sh"); err == nil || !strings.Contains(err.Error(), "DRAINKIT_TOOLBIN_TEST") {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := toolbin.Path("toolbintest", "DRAINKIT_TOOLBIN_TEST", "no-such.sh"); err == nil || !strings.HasPrefix(err.Error(), "toolbintest: ") {
		t.Fatalf("error %v does not start with the harness's name", err)
	}
	t.Setenv("DRAINKIT_TOOLBIN_TEST", "")
	if _, err := toolbin.Path("toolbintest", "DRAINKIT_TOOLBIN_TEST", "no-such.sh"); err == nil || !strings.Contains(err.Error(), "scripts/no-such.sh") {
		t.Fatalf("missing script: %v", err)
	}
}

// TestRequireSkipsOutsideCI runs this test binary again as a child
// (TestRequireChild) against an empty cache with scripts/consul.sh and a go
// command that fails: in a plain `go test` (no DRAINKIT_CONSUL_BIN, no CI)
// the test is skipped with one line naming `make test`; with CI set it
// fails instead (it tries to build and the build fails); with a binary in
// the cache it runs.
func TestRequireSkipsOutsideCI(t *testing.T) {
	dir := t.TempDir()
	failGo := filepath.Join(dir, "go")
	if err := os.WriteFile(failGo, []byte("#!/bin/sh\necho no build here >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	run := func(extra ...string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestRequireChild$", "-test.v")
		cmd.Env = append(withoutEnv("CI", "DRAINKIT_CONSUL_BIN"), append([]string{
			"DRAINKIT_TOOLBIN_CHILD=1", "DRAINKIT_CACHE=" + cache, "DRAINKIT_GO=" + failGo}, extra...)...)
		out, _ := cmd.CombinedOutput()
		return string(out)
	}
	out := run()
	if !strings.Contains(out, "--- SKIP: TestRequireChild") || strings.Contains(out, "--- FAIL") {
		t.Fatalf("without CI: want a skip\n%s", out)
	}
	lines := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "make test") {
			lines++
			if !strings.Contains(l, "DRAINKIT_CONSUL_BIN") {
				t.Errorf("the skip line does not name the variable: %q", l)
			}
		}
	}
	if lines != 1 {
		t.Errorf("%d lines name `make test`, want one:\n%s", lines, out)
	}
	out = run("CI=true")
	if !strings.Contains(out, "--- FAIL: TestRequireChild") || strings.Contains(out, "--- SKIP") || !strings.Contains(out, "no build here") {
		t.Fatalf("with CI: want a failure from the build\n%s", out)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cache, "consul-1.14.0"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out = run()
	if !strings.Contains(out, "--- PASS: TestRequireChild") || !strings.Contains(out, "got "+filepath.Join(cache, "consul-1.14.0")) {
		t.Fatalf("with a cached binary: want it used\n%s", out)
	}
}

// TestRequireChild is TestRequireSkipsOutsideCI's child.
func TestRequireChild(t *testing.T) {
	if os.Getenv("DRAINKIT_TOOLBIN_CHILD") == "" {
		t.Skip("run by TestRequireSkipsOutsideCI")
	}
	t.Logf("got %s", toolbin.Require(t, "toolbintest", "DRAINKIT_CONSUL_BIN", "consul.sh"))
}

// withoutEnv returns the environment without the named variables.
func withoutEnv(names ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			out = append(out, kv)
		}
	}
	return out
}

// TestRequireMainNacos: for a TestMain, a jar that scripts/nacos.sh has not
// built is one skip line naming the variable and `make test` outside CI
// (scripts/nacos.sh --cached answers 3 for an empty cache, never building);
// a variable naming a missing file is an error.
func TestRequireMainNacos(t *testing.T) {
	t.Setenv("CI", "")
	t.Setenv("DRAINKIT_NACOS_JAR", "")
	t.Setenv("DRAINKIT_CACHE", t.TempDir())
	p, skip, err := toolbin.RequireMain("nacostest", "DRAINKIT_NACOS_JAR", "nacos.sh")
	if p != "" || err != nil || strings.Count(skip, "\n") != 0 ||
		!strings.Contains(skip, "DRAINKIT_NACOS_JAR") || !strings.Contains(skip, "`make test`") {
		t.Fatalf("RequireMain = %q, %q, %v: want one skip line naming DRAINKIT_NACOS_JAR and `make test`", p, skip, err)
	}
	t.Setenv("DRAINKIT_NACOS_JAR", filepath.Join(t.TempDir(), "missing.jar"))
	if _, skip, err := toolbin.RequireMain("nacostest", "DRAINKIT_NACOS_JAR", "nacos.sh"); skip != "" || err == nil {
		t.Fatalf("with a missing DRAINKIT_NACOS_JAR: skip %q, err %v; want an error", skip, err)
	}
}
