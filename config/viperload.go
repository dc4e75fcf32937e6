package config

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/spf13/viper"
)

// loadViper is Load with Sources.Viper: drainkit's keys under the sub-tree
// of the application's viper configuration, with the application's
// precedence.
//
// Viper answers with the value that wins (Get) but not with where it came
// from, nor with the values it overrode. So Load also reads, for each key,
// the layers it can name, and checks every one of them like Load's own
// sources: the application's file (decoded again from ConfigFileUsed,
// through viper's codec, to find keys set twice and unknown keys in the
// sub-tree before viper merged them), the variable ViperEnvVar names, and
// the flag (from Sources.Flags: --<key's flag> as bound by BindViper, or
// --<sub.key> as bound by BindPFlags). The winning value is named after the
// highest of these layers that holds exactly it, or FromViper (Set, a
// remote provider, SetDefault, a binding of the application's own).
func loadViper(s Sources) (*Config, error) {
	v, sub := s.Viper, viperSub(s.ViperKey)
	if s.File != "" || s.Env != nil {
		return nil, &Error{Key: KeyConfig, Source: Source{Kind: FromCaller}, Problem: "is set together with Sources.Viper",
			Allowed: "leave Sources.File and Sources.Env unset: the application's viper reads its file and the environment"}
	}
	file, err := readViperFile(v, sub)
	if err != nil {
		return nil, err
	}
	c, checked := Default(), Default()
	c.sources, checked.sources = map[string]Source{}, map[string]Source{}
	layers := map[string][]rawValue{} // per key, every layer seen, lowest precedence first
	effective := map[string][]rawValue{}
	for _, k := range keys {
		fk := subKey(sub, k.name)
		var seen []rawValue
		if val, ok := file.vals[fk]; ok {
			seen = append(seen, rawValue{val, Source{Kind: FromFile, Name: file.path, Key: fk}})
		}
		if name := ViperEnvVar(v, sub, k.name); os.Getenv(name) != "" {
			seen = append(seen, rawValue{os.Getenv(name), Source{Kind: FromEnv, Name: name}})
		}
		if s.Flags != nil {
			for _, n := range []string{FlagName(k.name), fk} {
				if f := s.Flags.Lookup(n); f != nil && f.Changed {
					seen = append(seen, rawValue{f.Value.String(), Source{Kind: FromFlag, Name: "--" + n}})
					break
				}
			}
		}
		layers[k.name] = seen
		if !v.IsSet(fk) { // IsSet ignores a flag's default: drainkit's own default stays
			continue
		}
		win := rawValue{v.Get(fk), Source{Kind: FromViper, Key: fk}}
		for i := len(seen) - 1; i >= 0; i-- {
			if reflect.DeepEqual(seen[i].v, win.v) {
				win.src = seen[i].src
				break
			}
		}
		effective[k.name] = []rawValue{win}
	}
	// Every layer's value first (an overridden one too), then the winners.
	if err := checked.applyAll(layers, map[string]string{}); err != nil {
		return nil, err
	}
	given := map[string]string{}
	if err := c.applyAll(effective, given); err != nil {
		return nil, err
	}
	if err := c.validate(given); err != nil {
		return nil, err
	}
	c.warnings = viperWarnings(v, sub)
	return c, nil
}

// viperFile is drainkit's sub-tree of the application's file.
type viperFile struct {
	path string
	vals map[string]any // by sub.key, as viper returns them
}

// readViperFile decodes v's file (ConfigFileUsed) again, with viper's codec
// for its extension, and checks drainkit's sub-tree: no key set twice, no
// unknown key. A file Load cannot read again (none, an extension viper was
// told to ignore with SetConfigType, a file gone since) is skipped: its
// values are then named FromViper.
func readViperFile(v *viper.Viper, sub string) (viperFile, error) {
	path := v.ConfigFileUsed()
	format, ok := formats[strings.ToLower(filepath.Ext(path))]
	if path == "" || !ok {
		return viperFile{}, nil
	}
	data, err := os.ReadFile(path)
	if err != nil || len(data) > maxFileSize {
		return viperFile{}, nil
	}
	fv, flat, dup, err := readDocument(data, format, sub)
	if dup != nil { // the file viper read (ConfigFileUsed)
		return viperFile{}, &Error{Key: KeyConfig, Value: quoteValue(path), Source: Source{Kind: FromViper}, Problem: dup.Error(), Allowed: "set each key once"}
	}
	if err != nil { // the application's viper read it: the file changed since
		return viperFile{}, nil
	}
	if t, ok := table(flat[sub]); ok && len(t) == 0 {
		delete(flat, sub) // drainkit: {} sets nothing
	}
	if err := checkKeys(flat, sub, Source{Kind: FromFile, Name: path}); err != nil {
		return viperFile{}, joinErrors([]error{err})
	}
	f := viperFile{path: path, vals: map[string]any{}}
	for fk := range flat {
		f.vals[fk] = fileValue(fv, flat, strings.TrimPrefix(fk, sub+"."), fk)
	}
	return f, nil
}

// viperWarnings returns CheckEnv's warnings for the process environment,
// and one for each key's own DRAINKIT_* variable (and DRAINKIT_CONFIG) that
// is set but not what the application's viper reads, suggesting the
// variable it reads.
func viperWarnings(v *viper.Viper, sub string) []Warning {
	out := CheckEnv(nil)
	if os.Getenv(EnvConfig) != "" {
		out = append(out, Warning{Var: EnvConfig})
	}
	for _, k := range keys {
		own, app := EnvVar(k.name), ViperEnvVar(v, sub, k.name)
		if own != app && os.Getenv(own) != "" {
			out = append(out, Warning{Var: own, Suggestion: app})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Var < out[j].Var })
	return out
}
