package config

// SourceKind says which kind of source supplied a value.
type SourceKind int

// Kinds of sources, lowest precedence first.
const (
	FromDefault SourceKind = iota // the built-in default
	FromFile                      // the configuration file; Name is its path
	FromEnv                       // an environment variable; Name is e.g. DRAINKIT_PROPAGATION_MIN
	FromFlag                      // a command-line flag; Name is e.g. --propagation-min
	FromCaller                    // Sources.File, set by the program itself (only for key "config")
)

// Source is where a value came from.
type Source struct {
	Kind SourceKind
	// Name is the file path, the environment variable or the flag ("" for
	// FromDefault and FromCaller).
	Name string
}

// String returns "default", "file /etc/app.yaml", "env DRAINKIT_GRACE_PERIOD",
// "flag --grace-period" or "Sources.File".
func (s Source) String() string {
	switch s.Kind {
	case FromFile:
		return "file " + s.Name
	case FromEnv:
		return "env " + s.Name
	case FromFlag:
		return "flag " + s.Name
	case FromCaller:
		return "Sources.File"
	}
	return "default"
}
