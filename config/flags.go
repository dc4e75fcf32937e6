package config

import (
	"github.com/spf13/pflag"
)

// BindFlags adds to fs the flag --config (the file's path) and one flag per
// key: the key with '.' and '_' replaced by '-' (--propagation-min,
// --grace-period, --checks-failure-threshold, --admin-token, ...). The flags
// take their values as text; Load parses and validates them with the same
// messages as the file's and the environment's values, so a bad flag fails
// in Load, not in fs.Parse. Their defaults (shown in help) are those of
// Default; only flags set on the command line override other sources. A flag
// name fs already defines is left alone (Load still reads it). Passing the
// admin token as a flag exposes it in the process list: prefer
// DRAINKIT_ADMIN_TOKEN or the file.
func BindFlags(fs *pflag.FlagSet) { BindFlagsExcept(fs, nil) }

// BindFlagsExcept is BindFlags without the flags of the keys omit reports
// true for: drainkit.Main leaves out the registry.* keys no wired registrar
// reads. Load still reads an omitted key from the file and the environment
// (the caller decides whether a value there is an error); on the command
// line it is an unknown flag. A nil omit binds every key.
func BindFlagsExcept(fs *pflag.FlagSet, omit func(key string) bool) {
	if fs.Lookup(KeyConfig) == nil {
		fs.Var(&textValue{typ: "path"}, KeyConfig,
			"configuration file, .yaml, .yml, .toml or .json (env "+EnvConfig+")")
	}
	d := Default()
	for _, k := range keys {
		name := FlagName(k.name)
		if fs.Lookup(name) != nil || (omit != nil && omit(k.name)) {
			continue
		}
		def := k.format(d)
		if k.kind == kindSecret {
			def = ""
		}
		v := &textValue{s: def, typ: typeNames[k.kind], pairs: k.kind == kindMeta}
		fs.Var(v, name, k.help+" (env "+EnvVar(k.name)+"; "+k.allowed+")")
		if k.kind == kindBool {
			fs.Lookup(name).NoOptDefVal = "true"
		}
	}
}

var typeNames = map[kind]string{
	kindDuration: "duration", kindInt: "int", kindString: "string", kindSecret: "token", kindBool: "bool", kindFloat: "float",
	kindMeta: "key=value,...",
}

// textValue is a pflag.Value that keeps the text as given; Load converts it.
// A repeated flag replaces the earlier text, except for key=value pairs
// (pairs), where it adds its pairs to the earlier ones: losing the first
// --registry-meta of two silently would drop a zone, say.
type textValue struct {
	s     string
	typ   string
	pairs bool
	set   bool // Set was called: the text is no longer the default
}

func (v *textValue) String() string { return v.s }

func (v *textValue) Set(s string) error {
	if v.pairs && v.set {
		s = v.s + "," + s
	}
	v.s, v.set = s, true
	return nil
}

func (v *textValue) Type() string { return v.typ }
