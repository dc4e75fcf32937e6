package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestVersion: `drainkit version` and `drainkit --version` print one version
// line from the build information; the module ships its LICENSE.
func TestVersion(t *testing.T) {
	parallelDrill(t, 0)
	for _, args := range [][]string{{"version"}, {"--version"}} {
		r := drainkit(t, 20*time.Second, nil, args...)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "drainkit ") || strings.Count(r.stdout, "\n") != 1 || !strings.Contains(r.stdout, " go1.") {
			t.Errorf("drainkit %v: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	lic, err := os.ReadFile("../../LICENSE")
	if err != nil || !strings.Contains(string(lic), "Apache License") || !strings.Contains(string(lic), "Version 2.0, January 2004") {
		t.Errorf("LICENSE: %v", err)
	}
}
