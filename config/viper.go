package config

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// This file is the viper side of config: every source is read through a
// *viper.Viper, and drainkit's strictness sits on top of it. Viper folds
// "propagation: {min: 5s}" and "propagation.min: 6s" (or keys differing in
// case) into one value, so the file's document is checked as decoded, before
// viper merges it (strictDecoders); viper's getters convert leniently
// ("banana" is a 0 duration), so config only ever asks viper for the raw
// value (Get, IsSet) and converts it itself (parse.go).

// DefaultViperKey is the sub-tree of an application's viper configuration
// that holds drainkit's keys when Sources.ViperKey is empty: the file's
// drainkit: {propagation: {min: 5s}}, the key drainkit.propagation.min.
const DefaultViperKey = "drainkit"

// envReplacer turns a dotted viper key into its environment variable's
// spelling (after the prefix and upper-casing): '.' and '-' become '_'.
var envReplacer = strings.NewReplacer(".", "_", "-", "_")

// strictDecoders is the viper.DecoderRegistry config reads files with: it
// decodes with viper's own codec for the format, then flattens the document
// as the file spelled it (flatten), before viper lower-cases and merges it,
// and fails on a key set twice. With sub set, only drainkit's sub-tree is
// checked, however the file spells its path (nested tables, dotted keys, or
// both: see flatten): an application's own keys are its business.
type strictDecoders struct {
	sub  string
	flat map[string]any // the checked entries, by dotted lower-case key
	dup  error          // a key set twice
}

// Decoder implements viper.DecoderRegistry.
func (r *strictDecoders) Decoder(format string) (viper.Decoder, error) {
	codec, err := viper.NewCodecRegistry().Decoder(format)
	if err != nil {
		return nil, err
	}
	return strictDecoder{r, codec}, nil
}

type strictDecoder struct {
	r     *strictDecoders
	codec viper.Decoder
}

// Decode decodes b into m with viper's codec and checks the document. A
// decoder panic (there should be none) becomes an error rather than crashing
// the program at start.
func (d strictDecoder) Decode(b []byte, m map[string]any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decoder failed: %v", r)
		}
	}()
	if err := d.codec.Decode(b, m); err != nil {
		return err
	}
	flat := map[string]any{}
	if err := flatten(d.r.sub, "", "", m, flat, map[string]string{}); err != nil {
		d.r.dup = err
		return err
	}
	d.r.flat = flat
	return nil
}

// readDocument reads data, in format (yaml, toml or json), into a new viper
// instance through strictDecoders and returns it with the checked entries.
// dup is a key set twice; err is any other decoding error, as the format's
// decoder reported it.
func readDocument(data []byte, format, sub string) (v *viper.Viper, flat map[string]any, dup, err error) {
	reg := &strictDecoders{sub: sub}
	v = viper.NewWithOptions(viper.WithDecoderRegistry(reg))
	v.SetConfigType(format)
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		if reg.dup != nil {
			return nil, nil, reg.dup, nil
		}
		var pe viper.ConfigParseError
		if errors.As(err, &pe) && pe.Unwrap() != nil {
			err = pe.Unwrap() // the format decoder's own message
		}
		return nil, nil, nil, err
	}
	return v, reg.flat, nil, nil
}

// envLayer is the environment: the process's, read through viper's env
// binding (prefix DRAINKIT, key replacer '.' -> '_', one BindEnv per key),
// or Sources.Env's list. Viper can only read the process environment, so a
// list is looked up directly, under the same names (EnvVar);
// TestEnvListMatchesViper keeps the two equal.
type envLayer struct {
	v    *viper.Viper
	list map[string]string
}

func newEnvLayer(env []string) envLayer {
	if env != nil {
		return envLayer{list: parseEnv(env)}
	}
	v := viper.New()
	v.SetEnvPrefix(strings.TrimSuffix(envPrefix, "_"))
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	for _, k := range keys {
		_ = v.BindEnv(k.name) // with a key, BindEnv cannot fail
	}
	_ = v.BindEnv(KeyConfig)
	return envLayer{v: v}
}

// get returns key's value from the environment, if its variable is set and
// not empty.
func (e envLayer) get(key string) (string, Source, bool) {
	src := Source{Kind: FromEnv, Name: EnvVar(key)}
	if e.v == nil {
		s := e.list[src.Name]
		return s, src, s != ""
	}
	if !e.v.IsSet(key) {
		return "", src, false
	}
	s, ok := e.v.Get(key).(string)
	return s, src, ok
}

// flagLayer is the command line, read through viper's pflag binding: each
// key bound to its flag (FlagName) as text, so that viper never converts it.
type flagLayer struct{ v *viper.Viper }

func newFlagLayer(fs *pflag.FlagSet) flagLayer {
	v := viper.New()
	bindFlags(v, fs, "")
	return flagLayer{v}
}

// bindFlags binds, in v, each key's flag of fs (and --config when sub is "")
// to the key, under sub when sub is not "".
func bindFlags(v *viper.Viper, fs *pflag.FlagSet, sub string) {
	if fs == nil {
		return
	}
	if f := fs.Lookup(KeyConfig); f != nil && sub == "" {
		_ = v.BindFlagValue(KeyConfig, textFlag{f}) // a non-nil flag: no error
	}
	for _, k := range keys {
		if f := fs.Lookup(FlagName(k.name)); f != nil {
			_ = v.BindFlagValue(subKey(sub, k.name), textFlag{f})
		}
	}
}

func subKey(sub, key string) string {
	if sub == "" {
		return key
	}
	return sub + "." + key
}

// get returns key's value from its flag, if set on the command line.
func (l flagLayer) get(key string) (string, Source, bool) {
	src := Source{Kind: FromFlag, Name: "--" + FlagName(key)}
	if !l.v.IsSet(key) { // IsSet ignores a flag's default
		return "", src, false
	}
	s, ok := l.v.Get(key).(string)
	return s, src, ok
}

// textFlag is a viper.FlagValue that shows viper the flag's text as a
// string, whatever the flag's type: viper converts "int" and "bool" flags
// with its lenient casts ("many" -> 0), Load converts with its own checks.
type textFlag struct{ f *pflag.Flag }

func (t textFlag) HasChanged() bool    { return t.f.Changed }
func (t textFlag) Name() string        { return t.f.Name }
func (t textFlag) ValueString() string { return t.f.Value.String() }
func (t textFlag) ValueType() string   { return "string" }

// BindViper binds drainkit's keys, under sub (DefaultViperKey when ""), in
// an application's viper configuration v, for Load with Sources.Viper:
//
//   - each key's flag that BindFlags defined in fs (nil: none), with
//     v.BindFlagValue at sub.key (--propagation-min at
//     drainkit.propagation.min). Viper sees the flag's text, whatever the
//     flag's type, so its lenient casts never apply; Load converts it.
//   - each key's environment variable (ViperEnvVar: GREETER_DRAINKIT_PROPAGATION_MIN
//     with v.SetEnvPrefix("GREETER")), with v.BindEnv, so that it is read
//     whether or not v uses AutomaticEnv.
//
// The flags' help (BindFlags) then names these variables. Call it after
// v.SetEnvPrefix. The application's own flags, file, env
// binding, Set and SetDefault keep their viper precedence (Set, flag, env,
// file, remote, default); BindViper adds only these bindings. --config is
// not bound: the application's viper reads its own file.
func BindViper(v *viper.Viper, fs *pflag.FlagSet, sub string) {
	sub = viperSub(sub)
	bindFlags(v, fs, sub)
	for _, k := range keys {
		name := ViperEnvVar(v, sub, k.name)
		_ = v.BindEnv(subKey(sub, k.name), name) // with a key, BindEnv cannot fail
		if fs == nil {
			continue
		}
		if f := fs.Lookup(FlagName(k.name)); f != nil { // BindFlags' help names the variable
			f.Usage = strings.Replace(f.Usage, "(env "+EnvVar(k.name)+";", "(env "+name+";", 1)
		}
	}
}

// ViperEnvVar returns the environment variable BindViper binds to key under
// sub (DefaultViperKey when "") in v, and Load checks: v's env prefix (if
// any), '_', then sub.key, upper-cased with '.' and '-' replaced by '_'
// (GREETER_DRAINKIT_PROPAGATION_MIN, or DRAINKIT_PROPAGATION_MIN without a
// prefix). It is also what v.AutomaticEnv reads with the key replacer
// strings.NewReplacer(".", "_", "-", "_").
func ViperEnvVar(v *viper.Viper, sub, key string) string {
	name := subKey(viperSub(sub), key)
	if p := v.GetEnvPrefix(); p != "" {
		name = p + "_" + name
	}
	return strings.ToUpper(envReplacer.Replace(name))
}

// viperSub is sub lower-cased (viper keys are case-insensitive), or
// DefaultViperKey.
func viperSub(sub string) string {
	if sub == "" {
		return DefaultViperKey
	}
	return strings.ToLower(sub)
}
