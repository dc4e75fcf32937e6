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
	FromViper                     // the application's viper configuration (Sources.Viper): Set, a remote provider, SetDefault, or a binding Load cannot name
)

// Source is where a value came from.
type Source struct {
	Kind SourceKind
	// Name is the file path, the environment variable or the flag ("" for
	// FromDefault, FromCaller and FromViper).
	Name string
	// Key is the key in the application's viper configuration the value
	// was read at (Sources.Viper), e.g. "drainkit.propagation.min"; ""
	// otherwise.
	Key string
}

// String returns "default", "file /etc/app.yaml", "env DRAINKIT_GRACE_PERIOD",
// "flag --grace-period" or "Sources.File"; with Sources.Viper also "file
// /etc/app.yaml at drainkit.grace_period" and "viper key
// drainkit.grace_period".
func (s Source) String() string {
	switch s.Kind {
	case FromFile:
		if s.Key != "" {
			return "file " + s.Name + " at " + s.Key
		}
		return "file " + s.Name
	case FromViper:
		if s.Key == "" {
			return "viper"
		}
		return "viper key " + s.Key
	case FromEnv:
		return "env " + s.Name
	case FromFlag:
		return "flag " + s.Name
	case FromCaller:
		return "Sources.File"
	}
	return "default"
}
