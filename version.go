package drainkit

import "runtime/debug"

// modulePath is drainkit's module, whose version Version reports.
const modulePath = "github.com/drainkit/drainkit"

// Version returns the version of drainkit built into the program, from the
// build information (runtime/debug.ReadBuildInfo): the version of the
// github.com/drainkit/drainkit dependency (after any replace directive),
// such as "v0.3.0" or a pseudo-version; when drainkit is the main module (its
// own CLI, built in a checkout or with `go install module@version`), the main
// module's version, "(devel)" in a checkout, followed by the VCS revision and
// "+dirty" when the build recorded them. It returns "(unknown)" when the
// program carries no build information or does not list drainkit (a test
// binary of another module built without module support).
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	return version(bi)
}

// version is Version for the build information bi.
func version(bi *debug.BuildInfo) string {
	if bi.Main.Path != modulePath {
		for _, m := range bi.Deps {
			if m.Path != modulePath {
				continue
			}
			if m.Replace != nil {
				m = m.Replace
			}
			if m.Version == "" {
				return "(devel)" // replaced by a directory
			}
			return m.Version
		}
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

// ProgramVersion returns the program's own version: its main module's, read
// from the build information as Version reads drainkit's ("(devel)" and the
// VCS revision in a checkout, "(unknown)" without build information). It is
// what --version and the start line print, and what registry/etcd registers
// when registry.etcd.version is empty.
func ProgramVersion() string { return mainVersion() }

// mainVersion returns the program's own version (its main module's), for
// --version and the start line: what Version used to report.
func mainVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	main := *bi
	main.Main.Path = modulePath // read as if drainkit were the main module
	return version(&main)
}
