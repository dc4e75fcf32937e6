package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"
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
	// With Viper, Flags names a flag as a value's source, and a set
	// flag's value is checked like every layer's.
	Flags *pflag.FlagSet
	// Env is the environment as "KEY=value" strings; nil means os.Environ().
	// Only DRAINKIT_* variables are read; an empty value counts as unset.
	// Other DRAINKIT_* variables become Warnings (see CheckEnv).
	Env []string
	// Viper, when set, is the application's own configuration, and
	// drainkit's keys are read from its sub-tree ViperKey with its
	// precedence (Set, flags, env, file, remote provider, SetDefault), then
	// drainkit's defaults; File and Env must be empty (the application's
	// viper reads its file and the environment), and DRAINKIT_* variables
	// and --config are not read. Flags, if set, names a flag as a value's
	// source. See "An application's own viper configuration" in the
	// package documentation, and BindViper.
	Viper *viper.Viper
	// ViperKey is the sub-tree of Viper holding drainkit's keys, default
	// DefaultViperKey ("drainkit"); keys are case-insensitive, as in viper.
	// A dotted path ("infra.drainkit") names a nested sub-tree, which gets
	// every check the default one gets, however the file spells its path
	// (nested tables, one dotted key, or both).
	ViperKey string
}

// EnvConfig is the environment variable naming the configuration file.
const EnvConfig = "DRAINKIT_CONFIG"

// maxFileSize bounds the configuration file (1 MiB).
const maxFileSize = 1 << 20

// Load reads the file, the environment and the flags of s, in that order of
// increasing precedence, over the defaults (see Default), and validates the
// result. Every source is read through viper (the file with viper's codecs,
// the environment with its env binding, the flags with its pflag binding);
// the values are converted and checked here, never by viper's getters.
// Every value from every source is checked, even one a higher source
// overrides. The first problem found is returned as an *Error naming the
// key, the value, its source and the allowed range; the problems are: a
// file that is missing, unreadable, empty, not parseable, sets a key twice
// (nested and dotted, or in two letter cases) or has an unsupported
// extension (key "config"); an unknown key in the file; a value of the wrong
// type; an unparseable duration, one without a unit or with an unknown unit,
// one that overflows; and any value out of its range, including the grace
// period budget (budget.Timings.Validate, budget.CheckOptions.Validate).
// Unknown DRAINKIT_* environment variables do not fail Load: each becomes a
// Warning, with the closest key's variable when one is close (a typo), that
// Config.Warnings returns for the caller to log (see CheckEnv for why it is
// not an error). With s.Viper set, Load reads the application's viper
// configuration instead (see Sources.Viper).
func Load(s Sources) (*Config, error) {
	if s.Viper != nil {
		return loadViper(s)
	}
	env, flags := newEnvLayer(s.Env), newFlagLayer(s.Flags)

	c := Default()
	c.sources = map[string]Source{}
	raws := map[string][]rawValue{} // per key, lowest precedence first

	path, pathSrc := configPath(s.File, env, flags)
	var unknownKeys error // the file's unknown keys, reported with any bad value
	if path != "" {
		c.sources[KeyConfig] = pathSrc
		fileVals, err := readFile(path, pathSrc)
		if _, unknown := err.(unknownKeyErrors); unknown {
			unknownKeys = err
		} else if err != nil {
			return nil, err
		}
		for k, v := range fileVals {
			raws[k] = append(raws[k], rawValue{v, Source{Kind: FromFile, Name: path}})
		}
	}
	for _, k := range keys {
		if v, src, ok := env.get(k.name); ok {
			raws[k.name] = append(raws[k.name], rawValue{v, src})
		}
		if v, src, ok := flags.get(k.name); ok {
			raws[k.name] = append(raws[k.name], rawValue{v, src})
		}
	}
	given := map[string]string{}
	var errs []error
	if unknownKeys != nil {
		errs = append(errs, unknownKeys)
	}
	// A value that did not convert left its key at the default: judging
	// the ranges then would report a consequence, not the cause.
	if err := c.applyAll(raws, given); err != nil {
		errs = append(errs, err)
	} else if err := c.validate(given); err != nil {
		errs = append(errs, err)
	}
	if err := joinErrors(errs); err != nil {
		return nil, err
	}
	c.warnings = CheckEnv(s.Env)
	return c, nil
}

// applyAll converts every raw value of every key, in the order of keys and,
// per key, of precedence, so that the last one stays; given records each
// key's value as spelled, for errors. It reports every key with a bad value
// (its first bad one), not only the first key, so one edit fixes them all.
func (c *Config) applyAll(raws map[string][]rawValue, given map[string]string) error {
	var errs []error
	for _, k := range keys {
		for _, r := range raws[k.name] {
			if err := k.apply(c, r); err != nil {
				errs = append(errs, err)
				break
			}
			c.sources[k.name] = r.src
			given[k.name] = r.display(k)
			// A string's rule depends on no other key: check every source's
			// value, even one a higher source overrides.
			if k.kind == kindString || k.kind == kindSecret || k.kind == kindMeta {
				if msg := c.checkOwn(k); msg != "" {
					errs = append(errs, c.rangeError(k, given, msg, nil))
					break
				}
			}
		}
	}
	return joinErrors(errs)
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
func configPath(file string, env envLayer, flags flagLayer) (string, Source) {
	if p, src, ok := flags.get(KeyConfig); ok {
		return p, src
	}
	if p, src, ok := env.get(KeyConfig); ok {
		return p, src
	}
	if file != "" {
		return file, Source{Kind: FromCaller}
	}
	return "", Source{}
}

// formats maps file extensions to viper's config types.
var formats = map[string]string{".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".json": "json"}

// readFile reads the file through viper and returns its settings by dotted,
// lower-case key. A key set twice and unknown keys are errors.
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
	v, flat, dup, err := readDocument(data, format, "")
	if dup != nil {
		return nil, fileErr(dup.Error(), "set each key once", nil)
	}
	if err != nil {
		return nil, fileErr("is not valid "+format+": "+shorten(err.Error()), "see config.Example", err)
	}
	if len(flat) == 0 {
		return nil, fileErr("has no settings", "want at least one key, e.g. propagation.min: 5s; see config.Example", nil)
	}
	keyErr := checkKeys(flat, "", Source{Kind: FromFile, Name: path})
	if _, unknown := keyErr.(unknownKeyErrors); keyErr != nil && !unknown {
		return nil, keyErr
	}
	vals := make(map[string]any, len(flat))
	for k := range flat {
		if _, known := lookupKey(k); known {
			vals[k] = fileValue(v, flat, k, k)
		}
	}
	return vals, keyErr
}

// fileValue is the value of the file's key fk (key, without the viper
// sub-tree) to convert: the raw value from v, never a lenient getter, or
// for registry.meta the table as the file spelled it, since viper
// lower-cases a table's keys and meta keys are case-sensitive.
func fileValue(v *viper.Viper, flat map[string]any, key, fk string) any {
	if k, ok := lookupKey(key); ok && k.kind == kindMeta {
		if _, isTable := table(flat[fk]); isTable {
			return flat[fk]
		}
	}
	return v.Get(fk)
}

// checkKeys fails on an empty or unknown key of flat, whose keys are sub.key
// (or key when sub is ""); it names every unknown key, in sorted order, each
// with the closest known one (one *Error per key, joined), so that one run
// reports all of a file's typos.
func checkKeys(flat map[string]any, sub string, src Source) error {
	var unknown []string
	for fk := range flat {
		k := strings.TrimPrefix(fk, sub+".")
		if sub == "" {
			k = fk
		}
		if strings.Trim(k, ". \t") == "" || strings.Contains(k, "..") {
			return &Error{Key: KeyConfig, Value: quoteValue(src.Name), Source: src,
				Problem: fmt.Sprintf("has an empty key (%q)", fk), Allowed: "every key names a setting, e.g. propagation.min: 5s"}
		}
		if _, ok := lookupKey(k); !ok || k == fk && sub != "" {
			unknown = append(unknown, fk)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	errs := make([]error, len(unknown))
	for i, fk := range unknown {
		allowed := "known keys: " + strings.Join(Keys(), ", ")
		if sub != "" {
			allowed = "known keys under " + sub + ": " + strings.Join(Keys(), ", ")
		}
		if s := suggest(strings.TrimPrefix(fk, sub+".")); s != "" {
			allowed = "did you mean " + subKey(sub, s) + "?"
		}
		errs[i] = &Error{Key: fk, Source: src, Problem: "is not a known key", Allowed: allowed}
	}
	return unknownKeyErrors(errs)
}

// keyErrors is several errors reported at once, on one line ("; " between
// them) as every configuration error is; errors.As and errors.Is see each.
type keyErrors []error

func (e keyErrors) Error() string {
	msgs := make([]string, len(e))
	for i, err := range e {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e keyErrors) Unwrap() []error { return e }

// unknownKeyErrors is a file's unknown keys (checkKeys): Load reports them
// together with any bad value of the keys it knows, where a file it cannot
// read at all stops it at once.
type unknownKeyErrors []error

func (e unknownKeyErrors) Error() string   { return keyErrors(e).Error() }
func (e unknownKeyErrors) Unwrap() []error { return e }

// joinErrors returns nil for no error, the error itself for one, and
// keyErrors of them all for more, an error of several among them (keyErrors,
// unknownKeyErrors) spread into its parts so that each is one *Error.
func joinErrors(errs []error) error {
	var flat keyErrors
	for _, err := range errs {
		if multi, ok := err.(interface{ Unwrap() []error }); ok {
			flat = append(flat, multi.Unwrap()...)
		} else if err != nil {
			flat = append(flat, err)
		}
	}
	switch len(flat) {
	case 0:
		return nil
	case 1:
		return flat[0]
	}
	return flat
}

// flatten turns nested tables into dotted, lower-case keys, remembering how
// the file spelled each (spelled); with sub set, the keys are drainkit's
// under sub, and flatten descends only into the tables on sub's path, so
// that a nested sub-tree (infra.drainkit) is found however the file spells
// it: infra: {drainkit: {...}}, infra.drainkit: {...}, infra:
// {drainkit.propagation.min: 5s}; every other key is the application's and
// is neither returned nor checked. An empty table, or a table where a known
// key wants a scalar, is kept as a value so that it is reported rather than
// silently ignored. Two spellings of one key (nested and dotted, or
// differing in case) are an error naming both.
func flatten(sub, prefix, spelling string, m map[string]any, out map[string]any, spelled map[string]string) error {
	for k, v := range m {
		key, sp := strings.ToLower(k), k
		if prefix != "" {
			key, sp = prefix+"."+key, spelling+": {"+k
		}
		if sub != "" && key != sub && !strings.HasPrefix(key, sub+".") {
			// A table on sub's path (infra, for infra.drainkit) may hold
			// drainkit's keys; anything else is the application's own.
			if t, ok := table(v); ok && strings.HasPrefix(sub, key+".") {
				if err := flatten(sub, key, sp, t, out, spelled); err != nil {
					return err
				}
			}
			continue
		}
		_, known := lookupKey(key)
		if sub != "" {
			_, known = lookupKey(strings.TrimPrefix(key, sub+"."))
			known = known && strings.HasPrefix(key, sub+".")
		}
		if t, ok := table(v); ok && len(t) > 0 && !known {
			if err := flatten(sub, key, sp, t, out, spelled); err != nil {
				return err
			}
			continue
		}
		sp += strings.Repeat("}", strings.Count(sp, ": {"))
		if prev, dup := spelled[key]; dup {
			return fmt.Errorf("sets %s twice, as %q and as %q", key, min(prev, sp), max(prev, sp))
		}
		if t, ok := v.(map[string]any); ok {
			v = maps.Clone(t) // viper lower-cases the decoded tables' keys in place afterwards
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

// MaxKeyDistance is how far a file's key or a flag may be from a known one
// to be suggested: 3 edits, keys being longer than variables' words.
const MaxKeyDistance = 3

// suggest returns the known key closest to k, if it is close (a typo).
func suggest(k string) string {
	names := make([]string, len(keys))
	for i, def := range keys {
		names[i] = def.name
	}
	return Closest(k, names, MaxKeyDistance)
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
