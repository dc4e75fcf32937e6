// Package toolbin finds the external programs that drainkit's tests run
// against (the Consul agent, the etcd server, Chromium) and decides, in one
// place, what a test does when one is missing: under `make test` or with CI
// set it fails; in a plain `go test ./...` on a fresh clone it is skipped
// with one line naming `make test` (see Require and Missing).
//
// The server binaries come from an environment variable when it is set, else
// from the module's scripts/<name>.sh, which builds the binary once into a
// cache and prints its path.
package toolbin

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Path returns $envVar if it is set (and names an existing file), else the
// path printed by <module root>/scripts/<script>, which may build the binary
// first, taking minutes. The module root is the first directory above the
// working directory whose go.mod declares github.com/drainkit/drainkit.
// Its errors start with "<harness>: ", the name of the calling harness
// package (such as "consultest").
func Path(harness, envVar, script string) (string, error) {
	p, err := path(envVar, script)
	if err != nil {
		return "", fmt.Errorf("%s: %w", harness, err)
	}
	return p, nil
}

// EnvCI is the variable that makes a missing program a failure rather than
// a skip: CI systems set it (GitHub Actions, GitLab CI, ...), and .ci/run
// does too. Any value but "" and "false" counts.
const EnvCI = "CI"

// InCI reports whether $CI is set (see EnvCI).
func InCI() bool {
	v := os.Getenv(EnvCI)
	return v != "" && v != "false"
}

// Missing ends a test that needs a program this machine lacks: with CI set
// it fails t, else it skips t. Either way t gets one line: what is missing
// (what, e.g. "headless Chromium not found (apt-get install chromium, or
// set DRAINKIT_CHROMIUM)"), and that `make test` provides it.
func Missing(t testing.TB, what string) {
	t.Helper()
	if InCI() {
		t.Fatalf("%s; CI is set, so this test fails rather than skips", what)
	}
	t.Skip(skipLine(what))
}

// skipLine is the one line of a skipped test (or package, see ForMain).
func skipLine(what string) string {
	return what + ": skipped; `make test` provides it and runs every test (with CI set this fails instead)"
}

// errNotBuilt is scripts/<name>.sh --cached's answer when the binary is not
// in the cache yet (exit status 3).
var errNotBuilt = errors.New("not built yet")

// Require returns the binary a test harness needs (see Path). Under `make
// test` (envVar set) or with CI set it may build the binary first, and any
// failure fails t. In a plain `go test` it uses a binary already in the
// cache (scripts/<script> --cached) and, when there is none, calls Missing,
// which skips t with one line naming envVar and `make test`; other errors
// (a broken script) fail t.
func Require(t testing.TB, harness, envVar, script string) string {
	t.Helper()
	p, missing, err := find(harness, envVar, script)
	if missing != "" {
		Missing(t, missing)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// RequireMain is Require for a TestMain, which has no test to skip: it
// returns the path, or (outside `make test` and CI, when the binary is not
// built yet) skip, the one line the caller prints before it exits 0 without
// running its tests, or an error that should fail the package.
func RequireMain(harness, envVar, script string) (path, skip string, err error) {
	p, missing, err := find(harness, envVar, script)
	if missing != "" {
		return "", skipLine(missing), nil
	}
	return p, "", err
}

// find is Require's decision: the path; or what is missing, when the binary
// is not built outside `make test` and CI; or an error.
func find(harness, envVar, script string) (path, missing string, err error) {
	if os.Getenv(envVar) != "" || InCI() {
		p, err := Path(harness, envVar, script)
		return p, "", err
	}
	p, err := cached(script)
	if errors.Is(err, errNotBuilt) {
		return "", fmt.Sprintf("%s: %s is unset and scripts/%s has not built the binary yet", harness, envVar, script), nil
	}
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", harness, err)
	}
	return p, "", nil
}

// cached returns the path scripts/<script> --cached prints: the binary if it
// is in the cache, errNotBuilt if not; it never builds.
func cached(script string) (string, error) {
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(root, "scripts", script), "--cached")
	cmd.Dir = root
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		return "", errNotBuilt
	}
	if err != nil {
		return "", fmt.Errorf("scripts/%s --cached: %w: %s", script, err, stderr.String())
	}
	return strings.TrimSpace(string(out)), nil
}

func path(envVar, script string) (string, error) {
	if p := os.Getenv(envVar); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", envVar, p, err)
		}
		return p, nil
	}
	root, err := moduleRoot()
	if err != nil {
		return "", fmt.Errorf("%w; set %s", err, envVar)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(root, "scripts", script))
	cmd.Dir = root
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("scripts/%s: %w: %s", script, err, stderr.String())
	}
	p := strings.TrimSpace(string(out))
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("scripts/%s printed %q: %w", script, p, err)
	}
	return p, nil
}

// moduleRoot finds the drainkit module's root above the working directory.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module github.com/drainkit/drainkit\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("module root of github.com/drainkit/drainkit not found above the working directory")
		}
		dir = parent
	}
}
