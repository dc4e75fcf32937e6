//go:build linux

package k8sexample_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drainkit/drainkit/internal/kubetest"
)

// repoRoot is the repository's root, from this package's directory.
const repoRoot = "../../.."

// exampleDir holds the shipped manifest and Dockerfile.
var exampleDir = filepath.Join(repoRoot, "examples", "kubernetes")

// recipe is what examples/kubernetes/Dockerfile does, read from it: the
// builder stage's environment and its `go build` command, and the final
// stage's image (COPY --from=build's destination, ENTRYPOINT, ENV, USER,
// EXPOSE).
type recipe struct {
	buildEnv []string // the builder stage's ENV
	build    string   // the builder's RUN go build ... (shell form)
	copyFrom string   // COPY --from=build's source, the build's output
	image    kubetest.ImageConfig
}

// readRecipe parses the Dockerfile's two stages.
func readRecipe(t *testing.T) recipe {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(exampleDir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var r recipe
	stage := -1
	s := bufio.NewScanner(bytes.NewReader(raw))
	for s.Scan() {
		line := strings.TrimSpace(s.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instr, arg, _ := strings.Cut(line, " ")
		arg = strings.TrimSpace(arg)
		switch strings.ToUpper(instr) {
		case "FROM":
			stage++
		case "ENV":
			if stage == 0 {
				r.buildEnv = append(r.buildEnv, strings.Fields(arg)...)
			} else {
				r.image.Env = append(r.image.Env, strings.Fields(arg)...)
			}
		case "RUN":
			if stage == 0 && strings.HasPrefix(arg, "go build ") {
				r.build = arg
			}
		case "COPY":
			if f := strings.Fields(arg); stage == 1 && len(f) == 3 && f[0] == "--from=build" {
				r.copyFrom, r.image.Path = f[1], f[2]
			}
		case "USER":
			r.image.User = arg
		case "EXPOSE":
			for _, p := range strings.Fields(arg) {
				if !strings.Contains(p, "/") {
					p += "/tcp"
				}
				r.image.ExposedPorts = append(r.image.ExposedPorts, p)
			}
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(arg), &r.image.Entrypoint); err != nil {
				t.Fatalf("ENTRYPOINT %s is not exec form: %v", arg, err)
			}
		}
	}
	if stage != 1 || r.build == "" || r.copyFrom == "" || r.image.Path == "" || len(r.image.Entrypoint) == 0 {
		t.Fatalf("the Dockerfile is not the two-stage recipe this test reads: %+v", r)
	}
	return r
}

// buildImage runs the recipe's `go build` on the repository (the build
// context), with the main package pkg in place of the recipe's when pkg is
// not empty (a user's own service built the same way), and returns the
// binary that COPY takes into the image, under the name the image gives
// it. The builder's output directory (/out/) is a temporary one here.
func (r recipe) buildImage(t *testing.T, pkg string) string {
	t.Helper()
	out := t.TempDir()
	dir := filepath.Dir(r.copyFrom) + "/"
	if !strings.Contains(r.build, dir) {
		t.Fatalf("the recipe's build %q does not write into %s", r.build, dir)
	}
	cmdline := strings.ReplaceAll(r.build, dir, out+"/")
	if pkg != "" {
		f := strings.Fields(cmdline)
		cmdline = strings.Join(append(f[:len(f)-1], pkg), " ")
	}
	// RUN's shell form; the test's environment without GOWORK=off (make
	// kube's), so that go.work ties the modules together as in the image.
	cmd := exec.Command("sh", "-c", cmdline)
	cmd.Dir = repoRoot
	cmd.Env = append(withoutEnv(os.Environ(), "GOWORK"), r.buildEnv...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the recipe's %q: %v\n%s", cmdline, err, b)
	}
	built := filepath.Join(out, filepath.Base(r.copyFrom))
	bin := filepath.Join(t.TempDir(), filepath.Base(r.image.Path))
	if err := os.Rename(built, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// goBuild builds the main package pkg of the workspace into dir and
// returns the binary's path.
func goBuild(t *testing.T, pkg, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, pkg)
	cmd.Dir = repoRoot
	cmd.Env = append(withoutEnv(os.Environ(), "GOWORK"), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return bin
}

func withoutEnv(env []string, name string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, name+"=") {
			out = append(out, e)
		}
	}
	return out
}

// TestRecipe: the Dockerfile is read as the two-stage recipe the cluster
// tests build their image from (a change that this reader would silently
// misread fails here, not on the cluster).
func TestRecipe(t *testing.T) {
	r := readRecipe(t)
	want := fmt.Sprint([]string{r.image.Path, "--http-addr", ":8080"})
	if got := fmt.Sprint(r.image.Entrypoint); got != want || r.image.User != "65532:65532" ||
		fmt.Sprint(r.image.Env) != "[DRAINKIT_ADMIN_ADDR=:8081]" || !strings.Contains(fmt.Sprint(r.buildEnv), "CGO_ENABLED=0") {
		t.Errorf("recipe %+v: want ENTRYPOINT %s, USER 65532:65532, ENV DRAINKIT_ADMIN_ADDR=:8081, a static build", r, want)
	}
}
