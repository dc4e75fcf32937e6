package drainkit

import "runtime/debug"

// Version returns the main module's version from the build information
// (runtime/debug.ReadBuildInfo): a tag such as "v0.3.0" for `go install
// module@version`, a pseudo-version or "(devel)" for a build in a checkout,
// followed by the VCS revision and "+dirty" when the build recorded them.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " " + rev + dirty
	}
	return v
}
