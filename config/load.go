package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// Sources says where Load reads settings from. The zero value reads only the
// process environment.
type Sources struct {
	// File is the configuration file's path, "" for none. Its extension
	// picks the format: .yaml or .yml, .toml, .json. The flag --config and
	// the environment variable DRAINKIT_CONFIG, when set, replace it.
	File string
	// Flags is the caller's flag set, already parsed (see BindFlags); nil
	// for none. Only flags set on the command line count (pflag's Changed),
	// so a flag's default never hides an environment variable or the file.
	Flags *pflag.FlagSet
	// Env is the environment as "KEY=value" strings; nil means os.Environ().
	// Only DRAINKIT_* variables are read; an empty value counts as unset.
	// Other DRAINKIT_* variables become Warnings (see CheckEnv).
	Env []string
}

// EnvConfig is the environment variable naming the configuration file.
const EnvConfig = "DRAINKIT_CONFIG"

// maxFileSize bounds the configuration file (1 MiB).
const maxFileSize = 1 << 20

// Load reads the file, the environment and the flags of s, in that order of
// increasing precedence, over the defaults (see Default), and validates the
// result. Every value from every source is checked, even one a higher source
// overrides. The first problem found is returned as an *Error naming the key,
// the value, its source and the allowed range; the problems are: a file that
// is missing, unreadable, empty, not parseable or has an unsupported
// extension (key "config"); an unknown key in the file; a value of the wrong
// type; an unparseable duration, one without a unit or with an unknown unit,
// one that overflows; and any value out of its range, including the grace
// period budget (lifecycle.Timings.Validate, lifecycle.CheckOptions.Validate).
// Unknown DRAINKIT_* environment variables do not fail Load: each becomes a
// Warning, with the closest key's variable when one is close (a typo), that
// Config.Warnings returns for the caller to log (see CheckEnv for why it is
// not an error).
func Load(s Sources) (*Config, error) {
	env := s.Env
	if env == nil {
		env = os.Environ()
	}
	envMap := parseEnv(env)

	c := Default()
	c.sources = map[string]Source{}
	raws := map[string][]rawValue{} // per key, lowest precedence first

	path, pathSrc := configPath(s, envMap)
	if path != "" {
		c.sources[KeyConfig] = pathSrc
		fileVals, err := readFile(path, pathSrc)
		if err != nil {
			return nil, err
		}
		for k, v := range fileVals {
			raws[k] = append(raws[k], rawValue{v, Source{Kind: FromFile, Name: path}})
		}
	}
	for _, k := range keys {
		if v := envMap[EnvVar(k.name)]; v != "" {
			raws[k.name] = append(raws[k.name], rawValue{v, Source{Kind: FromEnv, Name: EnvVar(k.name)}})
		}
		if s.Flags != nil {
			if f := s.Flags.Lookup(FlagName(k.name)); f != nil && f.Changed {
				raws[k.name] = append(raws[k.name], rawValue{f.Value.String(), Source{Kind: FromFlag, Name: "--" + f.Name}})
			}
		}
	}
	given := map[string]string{}
	for _, k := range keys {
		for _, r := range raws[k.name] {
			if err := k.apply(c, r); err != nil {
				return nil, err
			}
			c.sources[k.name] = r.src
			given[k.name] = r.display(k)
			// A string's rule depends on no other key: check every source's
			// value, even one a higher source overrides.
			if k.kind == kindString || k.kind == kindSecret {
				if msg := c.checkOwn(k); msg != "" {
					return nil, c.rangeError(k, given, msg, nil)
				}
			}
		}
	}
	if err := c.validate(given); err != nil {
		return nil, err
	}
	c.warnings = CheckEnv(env)
	return c, nil
}

// parseEnv maps "KEY=value" strings; the first occurrence of a key wins, as
// with os.Getenv.
func parseEnv(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(k, envPrefix) {
			continue
		}
		if _, dup := m[k]; !dup {
			m[k] = v
		}
	}
	return m
}

// configPath picks the file: flag --config, then DRAINKIT_CONFIG, then
// Sources.File.
func configPath(s Sources, env map[string]string) (string, Source) {
	if s.Flags != nil {
		if f := s.Flags.Lookup(KeyConfig); f != nil && f.Changed {
			return f.Value.String(), Source{Kind: FromFlag, Name: "--" + KeyConfig}
		}
	}
	if p := env[EnvConfig]; p != "" {
		return p, Source{Kind: FromEnv, Name: EnvConfig}
	}
	if s.File != "" {
		return s.File, Source{Kind: FromCaller}
	}
	return "", Source{}
}

// formats maps file extensions to decoders.
var formats = map[string]string{".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".json": "json"}

// readFile decodes the file and returns its settings flattened to
// dotted, lower-case keys. Unknown keys are an error.
func readFile(path string, src Source) (map[string]any, error) {
	fileErr := func(problem, allowed string, err error) error {
		return &Error{Key: KeyConfig, Value: quoteValue(path), Source: src, Problem: problem, Allowed: allowed, Err: err}
	}
	ext := strings.ToLower(filepath.Ext(path))
	format, ok := formats[ext]
	if !ok {
		return nil, fileErr("has an unsupported extension "+quoteValue(ext), "want .yaml, .yml, .toml or .json", nil)
	}
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fileErr("does not exist", "want the path of a readable "+format+" file", err)
	case err != nil:
		return nil, fileErr("cannot be read: "+pathErrText(err), "want the path of a readable "+format+" file", err)
	case info.IsDir():
		return nil, fileErr("is a directory", "want the path of a readable "+format+" file", nil)
	case info.Size() > maxFileSize:
		return nil, fileErr("is too large", "at most 1 MiB", nil)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fileErr("cannot be read: "+pathErrText(err), "want the path of a readable "+format+" file", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fileErr("is empty", "want at least one key, e.g. propagation.min: 5s; see config.Example", nil)
	}
	settings, err := decode(data, format)
	if err != nil {
		return nil, fileErr("is not valid "+format+": "+shorten(err.Error()), "see config.Example", err)
	}
	flat := map[string]any{}
	if err := flatten("", "", settings, flat, map[string]string{}); err != nil {
		return nil, fileErr(err.Error(), "set each key once", nil)
	}
	if len(flat) == 0 {
		return nil, fileErr("has no settings", "want at least one key, e.g. propagation.min: 5s; see config.Example", nil)
	}
	var unknown []string
	for k := range flat {
		if strings.Trim(k, ". \t") == "" || strings.Contains(k, "..") {
			return nil, fileErr(fmt.Sprintf("has an empty key (%q)", k), "every key names a setting, e.g. propagation.min: 5s", nil)
		}
		if _, ok := lookupKey(k); !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		k := unknown[0]
		allowed := "known keys: " + strings.Join(Keys(), ", ")
		if s := suggest(k); s != "" {
			allowed = "did you mean " + s + "?"
		}
		return nil, &Error{Key: k, Source: Source{Kind: FromFile, Name: path}, Problem: "is not a known key", Allowed: allowed}
	}
	return flat, nil
}

// decode parses data as format into a tree of tables. It uses the format's
// own decoder rather than viper's merged view, which would silently fold
// "propagation: {min: 5s}" and "propagation.min: 6s" (or keys differing only
// in case) into one value. A decoder panic (there should be none) becomes an
// error rather than crashing the program at start.
func decode(data []byte, format string) (settings map[string]any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decoder failed: %v", r)
		}
	}()
	switch format {
	case "yaml":
		err = yaml.Unmarshal(data, &settings)
	case "toml":
		err = toml.Unmarshal(data, &settings)
	default:
		err = json.Unmarshal(data, &settings)
	}
	return settings, err
}

// flatten turns nested tables into dotted, lower-case keys, remembering how
// the file spelled each (spelled). An empty table, or a table where a known
// key wants a scalar, is kept as a value so that it is reported rather than
// silently ignored. Two spellings of one key (nested and dotted, or
// differing in case) are an error naming both.
func flatten(prefix, spelling string, m map[string]any, out map[string]any, spelled map[string]string) error {
	for k, v := range m {
		key, sp := strings.ToLower(k), k
		if prefix != "" {
			key, sp = prefix+"."+key, spelling+": {"+k
		}
		_, known := lookupKey(key)
		if sub, ok := table(v); ok && len(sub) > 0 && !known {
			if err := flatten(key, sp, sub, out, spelled); err != nil {
				return err
			}
			continue
		}
		sp += strings.Repeat("}", strings.Count(sp, ": {"))
		if prev, dup := spelled[key]; dup {
			return fmt.Errorf("sets %s twice, as %q and as %q", key, min(prev, sp), max(prev, sp))
		}
		out[key], spelled[key] = v, sp
	}
	return nil
}

// table returns v as a table if it is one (YAML may decode a table with
// non-string keys as map[any]any).
func table(v any) (map[string]any, bool) {
	switch t := v.(type) {
	case map[string]any:
		return t, true
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = x
		}
		return m, true
	}
	return nil, false
}

// suggest returns the known key closest to k, if it is close (a typo).
func suggest(k string) string {
	best, bestD := "", 4
	for _, def := range keys {
		if d := distance(k, def.name); d < bestD {
			best, bestD = def.name, d
		}
	}
	return best
}

// distance is the edit distance between a and b counting insertions,
// deletions, substitutions and swaps of two adjacent bytes as 1 each (the
// optimal string alignment distance: "MNI" is 1 from "MIN"), capped at 100
// for long inputs.
func distance(a, b string) int {
	if len(a) > 100 {
		return 100
	}
	rows := [3][]int{make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)}
	for j := range rows[1] {
		rows[1][j] = j
	}
	for i := 1; i <= len(a); i++ {
		pp, prev, cur := rows[0], rows[1], rows[2] // rows i-2, i-1, i
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		rows = [3][]int{prev, cur, pp}
	}
	return rows[1][len(b)]
}

// shorten keeps a decoder's message to one short line.
func shorten(s string) string {
	s = oneLine(s)
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

// pathErrText is a file-system error without the path (the Error shows it).
func pathErrText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
