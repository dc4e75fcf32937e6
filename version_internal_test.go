package drainkit

import (
	"runtime/debug"
	"testing"
)

// TestVersionIsDrainkits: Version reads drainkit's own entry in the build
// information, whichever program it is built into.
func TestVersionIsDrainkits(t *testing.T) {
	dep := func(path, v string, repl *debug.Module) *debug.Module {
		return &debug.Module{Path: path, Version: v, Replace: repl}
	}
	for _, c := range []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"a dependency", debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v9.9.9"},
			Deps: []*debug.Module{dep("golang.org/x/sync", "v0.1.0", nil), dep(modulePath, "v0.3.0", nil)}}, "v0.3.0"},
		{"replaced by a version", debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{dep(modulePath, "v0.3.0", dep("example.com/fork", "v0.3.1", nil))}}, "v0.3.1"},
		{"replaced by a directory", debug.BuildInfo{Main: debug.Module{Path: "example.com/app"},
			Deps: []*debug.Module{dep(modulePath, "v0.3.0", dep("../drainkit", "", nil))}}, "(devel)"},
		{"not a dependency", debug.BuildInfo{Main: debug.Module{Path: "example.com/app", Version: "v1.0.0"}}, "(unknown)"},
		{"the main module", debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v0.4.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.modified", Value: "true"}}},
			"v0.4.0 0123456789ab+dirty"},
		{"the main module in a checkout", debug.BuildInfo{Main: debug.Module{Path: modulePath}}, "(devel)"},
	} {
		if got := version(&c.bi); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
