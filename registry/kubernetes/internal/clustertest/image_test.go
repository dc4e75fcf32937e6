//go:build linux

package clustertest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/drainkit/drainkit/internal/kubetest"
)

// importBinary builds the static binary of package pkg in the module at
// dir (relative to this package, with GOWORK=gowork) and imports it into
// the cluster as image.
func importBinary(t *testing.T, c *kubetest.Cluster, dir, pkg, gowork, image string) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	build := exec.Command("go", "build", "-o", bin, pkg)
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK="+gowork)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s in %s: %v\n%s", pkg, dir, err, out)
	}
	if err := c.ImportImage(image, bin); err != nil {
		t.Fatal(err)
	}
}
