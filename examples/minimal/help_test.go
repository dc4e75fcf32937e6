package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/drainkit/drainkit/internal/childtest"
)

// TestHelpShowsNoRegistryFlag: this program wires no registrar, so its
// --help, run as the built binary, lists no registry flag (issue 20), and
// a registry setting makes it exit 2 naming the setting.
func TestHelpShowsNoRegistryFlag(t *testing.T) {
	bin, remove, err := childtest.Build("github.com/drainkit/drainkit/examples/minimal")
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	out, err := exec.Command(bin, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("--help: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--propagation-min") || strings.Contains(string(out), "--registry") {
		t.Errorf("--help lists a registry flag, or not the others:\n%s", out)
	}
	cmd := exec.Command(bin, "--admin-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0")
	cmd.Env = []string{"DRAINKIT_REGISTRY_SERVICE=orders"}
	out, err = cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 ||
		!strings.Contains(string(out), "registry.service (from env DRAINKIT_REGISTRY_SERVICE) is set, but this program wires no registrar") {
		t.Errorf("a registry setting: %v\n%s", err, out)
	}
}
