package toolbin_test

import (
	"os"
	"path/filepath"
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
