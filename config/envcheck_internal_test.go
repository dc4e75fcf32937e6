package config

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOtherEnvIsComplete keeps otherEnv the one true list: every DRAINKIT_*
// name the repository mentions (code, scripts, Makefile, docs) is a key's
// variable or in otherEnv, and every otherEnv entry is still mentioned
// outside config (DRAINKIT_CONFIG is config's own). config's own tests and
// the root package's typo test, which spell unknown names on purpose, are
// skipped, and so are the docs' example typos.
func TestOtherEnvIsComplete(t *testing.T) {
	docTypos := map[string]bool{ // the typos the docs show in their warnings
		"DRAINKIT_PROPAGATION_MNI": true, "DRAINKIT_REGISTRY_ETCD_ENDPONTS": true,
	}
	name := regexp.MustCompile(`DRAINKIT_[A-Z0-9_]*[A-Z0-9]`)
	skip := func(rel string) bool {
		return strings.HasPrefix(rel, "config/") && strings.HasSuffix(rel, "_test.go") || rel == "envwarn_test.go"
	}
	unused := map[string]bool{}
	for v := range otherEnv {
		unused[v] = v != EnvConfig
	}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if skip(rel) || !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range name.FindAllIndex(data, -1) {
			if m[1] < len(data) && data[m[1]] == '_' {
				continue // a prefix such as DRAINKIT_REGISTRY_*, not a name
			}
			v := string(data[m[0]:m[1]])
			if !strings.HasPrefix(rel, "config/") {
				delete(unused, v)
			}
			if !isKnownEnv(v) && !docTypos[v] {
				t.Errorf("%s: %s is neither a key's variable nor in otherEnv (config/envcheck.go)", rel, v)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for v, u := range unused {
		if !u {
			continue
		}
		t.Errorf("otherEnv lists %s, which nothing outside config mentions any more", v)
	}
}
