package config_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/config"
)

// docEntry is one entry of a configuration document, as a file spells it:
// key is the table's key as written (it may hold dots: "propagation.min" is
// one dotted key), val a scalar (string, int, bool) or a table ([]docEntry,
// in the file's order).
type docEntry struct {
	key string
	val any
}

// subTree is where an application keeps drainkit's keys in its viper
// configuration (Sources.ViperKey), with the prefix of the variables
// BindViper binds there (the application's prefix is GREETER).
type subTree struct{ key, env string }

// subTrees: drainkit's default top-level tree, a nested one and a deeper one.
var subTrees = []subTree{
	{"drainkit", "GREETER_DRAINKIT"},
	{"infra.drainkit", "GREETER_INFRA_DRAINKIT"},
	{"a.b.c", "GREETER_A_B_C"},
}

// document is the file for one case under s: at every table on s's path,
// the application's own keys (one of them set twice, nested and dotted, and
// one that starts like the next table of the path), which drainkit must not
// check; inside s's table, in, when withTree; then top, at the top level,
// where "@" in a key stands for s's key (the tree spelled as one dotted
// key).
func (s subTree) document(in, top []docEntry, withTree bool) []docEntry {
	parts := strings.Split(s.key, ".")
	inner := in
	for i := len(parts) - 1; i >= 0; i-- {
		level := []docEntry{
			{"app", []docEntry{{"port", 1}}}, {"app.port", 2},
			{parts[i] + "x", []docEntry{{"propagation", []docEntry{{"mn", "5s"}}}}},
		}
		if withTree || i < len(parts)-1 {
			level = append(level, docEntry{parts[i], inner})
		}
		inner = level
	}
	for _, e := range top {
		inner = append(inner, docEntry{strings.Replace(e.key, "@", s.key, 1), e.val})
	}
	return inner
}

// expand replaces, in a case's expectation, {S} by s's key, {ENV} by its
// variables' prefix, {F} by the file's path, and {S<} ... {>} by the
// nested spelling of s's tables around what they enclose ("infra: {drainkit:
// {" ... "}}" for infra.drainkit).
func (s subTree) expand(text, file string) string {
	parts := strings.Split(s.key, ".")
	return strings.NewReplacer("{S<}", strings.Join(parts, ": {")+": {", "{>}", strings.Repeat("}", len(parts)),
		"{S}", s.key, "{ENV}", s.env, "{F}", file).Replace(text)
}

// renderers write a document in each format the existing viper tests use.
var renderers = []struct {
	ext    string
	render func([]docEntry) string
}{
	{".yaml", func(d []docEntry) string { var b strings.Builder; renderYAML(&b, d, ""); return b.String() }},
	{".toml", func(d []docEntry) string {
		var b strings.Builder
		for _, e := range d {
			fmt.Fprintf(&b, "%s = %s\n", quoted(e.key), renderInline(e.val, " = "))
		}
		return b.String()
	}},
	{".json", func(d []docEntry) string { return renderInline(d, ": ") + "\n" }},
}

func renderYAML(b *strings.Builder, d []docEntry, indent string) {
	for _, e := range d {
		key := e.key
		if key == "" {
			key = `""`
		}
		switch t := e.val.(type) {
		case []docEntry:
			if len(t) == 0 {
				fmt.Fprintf(b, "%s%s: {}\n", indent, key)
				continue
			}
			fmt.Fprintf(b, "%s%s:\n", indent, key)
			renderYAML(b, t, indent+"  ")
		default:
			fmt.Fprintf(b, "%s%s: %s\n", indent, key, renderInline(t, ""))
		}
	}
}

// renderInline writes v as a TOML inline table or a JSON object (sep "="
// or ":"), or as a scalar both (and YAML) read alike.
func renderInline(v any, sep string) string {
	t, ok := v.([]docEntry)
	if !ok {
		b, _ := json.Marshal(v)
		return string(b)
	}
	var parts []string
	for _, e := range t {
		parts = append(parts, quoted(e.key)+sep+renderInline(e.val, sep))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// shortFile writes content to a file named name in a new directory
// directly under the system's temporary one, so that its path fits an
// Error's value unshortened.
func shortFile(t *testing.T, name, content string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "dk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func quoted(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestViperSubTreeChecks: drainkit's keys under any sub-tree of an
// application's viper configuration get every check the default top-level
// drainkit: tree gets, in YAML, TOML and JSON, with the environment, flags,
// Set and SetDefault over the file: each value is named after the layer
// that gave it (the file by its path and full dotted key), every layer's
// value is checked even when overridden, an unknown key in the tree is
// refused with the closest key's suggestion, a key set twice is refused
// naming both spellings, and the application's own keys (also beside the
// tree, at every level of its path) are its business. Every case expects
// the same verdict under every tree; only the tree's own spelling differs.
func TestViperSubTreeChecks(t *testing.T) {
	const budgetAllowed = "must be >= 24s: propagation.max + drain.timeout + stop.timeout"
	for _, tc := range []struct {
		name       string
		tree, top  []docEntry // in the tree's table; at the top level, "@" for the tree's key
		emptyTree  bool       // write the tree's table even when tree is empty
		env        map[string]string
		args       []string
		set, deflt map[string]any
		err        string   // the error Load returns, "" for none
		want       []string // "key=value source" of the keys that matter
	}{
		{name: "every layer named",
			tree: []docEntry{{"propagation", []docEntry{{"min", "2s"}, {"quiet", "500ms"}}}, {"drain.timeout", "4s"},
				{"admin", []docEntry{{"metrics", true}}}, {"checks", []docEntry{{"success_threshold", 7}}}},
			env:   map[string]string{"propagation.quiet": "700ms", "propagation.max": "9s"},
			args:  []string{"--propagation-min=4s", "--admin-addr=127.0.0.1:0"},
			set:   map[string]any{"checks.failure_threshold": 2},
			deflt: map[string]any{"stop.timeout": 2 * time.Second},
			want: []string{
				"propagation.min=4s flag --propagation-min",
				"propagation.quiet=700ms env {ENV}_PROPAGATION_QUIET",
				"propagation.max=9s env {ENV}_PROPAGATION_MAX",
				"drain.timeout=4s file {F} at {S}.drain.timeout",
				"admin.metrics=true file {F} at {S}.admin.metrics",
				"checks.success_threshold=7 file {F} at {S}.checks.success_threshold",
				"checks.failure_threshold=2 viper key {S}.checks.failure_threshold",
				"stop.timeout=2s viper key {S}.stop.timeout",
				"admin.addr=127.0.0.1:0 flag --admin-addr",
				"grace_period=25s default",
			}},
		{name: "the file's value under an equal variable is the variable's",
			tree: []docEntry{{"drain", []docEntry{{"timeout", "3s"}}}},
			env:  map[string]string{"drain.timeout": "3s"},
			want: []string{"drain.timeout=3s env {ENV}_DRAIN_TIMEOUT"}},
		{name: "the tree spelled as one dotted key",
			top:  []docEntry{{"@", []docEntry{{"grace_period", "30s"}, {"registry", []docEntry{{"meta", []docEntry{{"zone", "a"}}}}}}}},
			want: []string{"grace_period=30s file {F} at {S}.grace_period", "registry.meta=zone=a file {F} at {S}.registry.meta"}},
		{name: "a key dotted from the top level",
			tree: []docEntry{{"propagation", []docEntry{{"min", "1s"}}}},
			top:  []docEntry{{"@.drain.timeout", "4s"}},
			want: []string{"propagation.min=1s file {F} at {S}.propagation.min", "drain.timeout=4s file {F} at {S}.drain.timeout"}},
		{name: "an empty tree sets nothing", emptyTree: true,
			want: []string{"grace_period=25s default", "drain.timeout=6s default"}},
		{name: "no tree: only the application's keys", want: []string{"grace_period=25s default"}},

		{name: "bad file value under a variable",
			tree: []docEntry{{"propagation", []docEntry{{"quiet", 5}}}},
			env:  map[string]string{"propagation.quiet": "1s"},
			err:  `propagation.quiet: 5 from file {F} at {S}.propagation.quiet has no unit (a duration needs a unit, e.g. 5s; range >= 0s, <= propagation.max)`},
		{name: "bad file string under a flag",
			tree: []docEntry{{"admin", []docEntry{{"addr", "nope"}}}},
			args: []string{"--admin-addr=127.0.0.1:0"},
			err:  `admin.addr: "nope" from file {F} at {S}.admin.addr is not valid (must be host:port with a numeric port 0..65535, e.g. :8081 or 127.0.0.1:8081)`},
		{name: "bad file string under Set",
			tree: []docEntry{{"registry", []docEntry{{"service", "bad name"}}}},
			set:  map[string]any{"registry.service": "good"},
			err:  `registry.service: "bad name" from file {F} at {S}.registry.service is not valid`},
		{name: "bad file type under a flag",
			tree: []docEntry{{"checks", []docEntry{{"failure_threshold", []docEntry{{"x", 1}}}}}},
			args: []string{"--checks-failure-threshold=3"},
			err:  `checks.failure_threshold: map[x:1] from file {F} at {S}.checks.failure_threshold is a table, not an integer (range 1..1000)`},
		{name: "bad variable over the file",
			tree: []docEntry{{"propagation", []docEntry{{"min", "2s"}}}},
			env:  map[string]string{"propagation.min": "banana"},
			err:  `propagation.min: "banana" from env {ENV}_PROPAGATION_MIN is not a duration (want e.g. 5s; range >= 0s, <= propagation.max)`},
		{name: "bad flag over the file",
			tree: []docEntry{{"checks", []docEntry{{"failure_threshold", 3}}}},
			args: []string{"--checks-failure-threshold=many"},
			err:  `checks.failure_threshold: "many" from flag --checks-failure-threshold is not an integer (range 1..1000)`},
		{name: "the file's value out of the budget",
			tree: []docEntry{{"grace_period", "5s"}},
			err:  `grace_period: "5s" from file {F} at {S}.grace_period is out of range (` + budgetAllowed},
		{name: "Set out of the budget over the file",
			tree: []docEntry{{"grace_period", "30s"}},
			set:  map[string]any{"grace_period": 5 * time.Second},
			err:  `grace_period: 5s from viper key {S}.grace_period is out of range (` + budgetAllowed},

		{name: "unknown key, a typo",
			tree: []docEntry{{"propagation", []docEntry{{"mn", "5s"}}}},
			env:  map[string]string{"propagation.min": "1s"},
			err:  `{S}.propagation.mn: from file {F} is not a known key (did you mean {S}.propagation.min?)`},
		{name: "unknown key, a dotted typo",
			tree: []docEntry{{"drain.timout", "5s"}},
			err:  `{S}.drain.timout: from file {F} is not a known key (did you mean {S}.drain.timeout?)`},
		{name: "unknown key, dotted from the top level",
			top: []docEntry{{"@.grace_perod", "30s"}},
			err: `{S}.grace_perod: from file {F} is not a known key (did you mean {S}.grace_period?)`},
		{name: "unknown key, far from every key",
			tree: []docEntry{{"colour", "blue"}},
			err:  `{S}.colour: from file {F} is not a known key (known keys under {S}: `},
		{name: "a table where a setting is",
			tree: []docEntry{{"propagation", []docEntry{{"min", []docEntry{{"value", "5s"}}}}}},
			err:  `propagation.min: map[value:5s] from file {F} at {S}.propagation.min is a table, not a duration (want e.g. 5s; range >= 0s, <= propagation.max)`},
		{name: "an empty key",
			tree: []docEntry{{"", 5}},
			err:  `config: "{F}" from file {F} has an empty key ("{S}.") (every key names a setting, e.g. propagation.min: 5s)`},

		{name: "set twice, nested and dotted",
			tree: []docEntry{{"propagation", []docEntry{{"min", "5s"}}}, {"propagation.min", "6s"}},
			err:  `config: "{F}" from viper sets {S}.propagation.min twice, as "{S<}propagation.min{>}" and as "{S<}propagation: {min}{>}" (set each key once)`},
		{name: "set twice, in the tree and dotted from the top level",
			tree: []docEntry{{"propagation", []docEntry{{"min", "5s"}}}},
			top:  []docEntry{{"@.propagation.min", "6s"}},
			err:  `config: "{F}" from viper sets {S}.propagation.min twice, as "{S}.propagation.min" and as "{S<}propagation: {min}{>}" (set each key once)`},
		{name: "set twice, in two cases",
			tree: []docEntry{{"Grace_period", "30s"}, {"grace_period", "40s"}},
			env:  map[string]string{"grace_period": "50s"},
			err:  `config: "{F}" from viper sets {S}.grace_period twice, as "{S<}Grace_period{>}" and as "{S<}grace_period{>}" (set each key once)`},
	} {
		for _, tree := range subTrees {
			for _, r := range renderers {
				t.Run(tc.name+"/"+tree.key+"/"+r.ext, func(t *testing.T) {
					d := tree.document(tc.tree, tc.top, len(tc.tree) > 0 || tc.emptyTree)
					file := shortFile(t, "greeter"+r.ext, r.render(d))
					for k, val := range tc.env {
						t.Setenv(tree.env+"_"+strings.ToUpper(strings.ReplaceAll(k, ".", "_")), val)
					}
					v, fs := appViperAt(t, tree.key, file, tc.args...)
					for k, x := range tc.set {
						v.Set(tree.key+"."+k, x)
					}
					for k, x := range tc.deflt {
						v.SetDefault(tree.key+"."+k, x)
					}
					c, err := config.Load(config.Sources{Viper: v, ViperKey: tree.key, Flags: fs})
					if tc.err != "" {
						want := tree.expand(tc.err, file)
						if err == nil || !strings.HasPrefix(err.Error(), want) {
							t.Fatalf("err = %v\nwant      %s...\nfile:\n%s", err, want, r.render(d))
						}
						return
					}
					if err != nil {
						t.Fatalf("err = %v\nfile:\n%s", err, r.render(d))
					}
					values := map[string]string{}
					for _, kv := range strings.Fields(c.String()) {
						k, val, _ := strings.Cut(kv, "=")
						values[k] = val
					}
					for _, w := range tc.want {
						want := tree.expand(w, file)
						key, _, _ := strings.Cut(want, "=")
						if got := fmt.Sprintf("%s=%s %s", key, values[key], c.Source(key)); got != want {
							t.Errorf("got  %s\nwant %s", got, want)
						}
					}
				})
			}
		}
	}
}
