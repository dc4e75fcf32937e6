package config_test

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/drainkit/drainkit/config"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// TestRegistryMeta: registry.meta loads from the environment, a file (a
// table or text) and a flag, renders sorted in String, and is a shared
// registry key.
func TestRegistryMeta(t *testing.T) {
	if config.Default().Registry.Meta != nil {
		t.Fatalf("default meta %v, want none", config.Default().Registry.Meta)
	}
	c, err := config.Load(config.Sources{Env: []string{"DRAINKIT_REGISTRY_META= zone=eu-west-1a , track=stable,,note=a=b"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"zone": "eu-west-1a", "track": "stable", "note": "a=b"}
	// Only ASCII white space is trimmed: a Unicode space ends up in the
	// registry as given.
	if c, err := config.Load(config.Sources{Env: []string{"DRAINKIT_REGISTRY_META=zone=a\u00a0\n"}}); err != nil || c.Registry.Meta["zone"] != "a\u00a0" {
		t.Errorf("non-breaking space: %v %q", err, c.Registry.Meta)
	}
	if !maps.Equal(c.Registry.Meta, want) || c.Source("registry.meta").String() != "env DRAINKIT_REGISTRY_META" {
		t.Fatalf("env: %v from %v", c.Registry.Meta, c.Source("registry.meta"))
	}
	if s := c.String(); !strings.Contains(s, "registry.meta=note=a=b,track=stable,zone=eu-west-1a ") {
		t.Errorf("String: %s", s)
	}
	for name, content := range map[string]string{
		"table.yaml": "registry:\n  meta:\n    zone: a\n    version: \"1.10\"\n",
		"text.yaml":  "registry.meta: zone=a,version=1.10\n",
		"table.toml": "[registry.meta]\nzone = \"a\"\nversion = \"1.10\"\n",
		"table.json": `{"registry": {"meta": {"zone": "a", "version": "1.10"}}}`,
	} {
		c, err := config.Load(config.Sources{Env: []string{}, File: writeFile(t, name, content)})
		if err != nil || !maps.Equal(c.Registry.Meta, map[string]string{"zone": "a", "version": "1.10"}) {
			t.Errorf("%s: %v %v", name, err, c)
		}
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	config.BindFlags(fs)
	if err := fs.Parse([]string{"--registry-meta=zone=b"}); err != nil {
		t.Fatal(err)
	}
	c, err = config.Load(config.Sources{Env: []string{"DRAINKIT_REGISTRY_META=zone=a,track=x"}, Flags: fs})
	if err != nil || !maps.Equal(c.Registry.Meta, map[string]string{"zone": "b"}) {
		t.Fatalf("flag over env: %v %v", err, c)
	}
	// A repeated flag adds its pairs, as docker's --label does: the first
	// ones are not lost, and a key given twice is an error.
	fs = pflag.NewFlagSet("t", pflag.ContinueOnError)
	config.BindFlags(fs)
	if err := fs.Parse([]string{"--registry-meta=zone=b", "--registry-meta", "track=y,note=1"}); err != nil {
		t.Fatal(err)
	}
	c, err = config.Load(config.Sources{Env: []string{}, Flags: fs})
	if err != nil || !maps.Equal(c.Registry.Meta, map[string]string{"zone": "b", "track": "y", "note": "1"}) {
		t.Fatalf("repeated flag: %v %v", err, c)
	}
	fs = pflag.NewFlagSet("t", pflag.ContinueOnError)
	config.BindFlags(fs)
	if err := fs.Parse([]string{"--registry-meta=zone=b", "--registry-meta=zone=c"}); err != nil {
		t.Fatal(err)
	}
	if _, err = config.Load(config.Sources{Env: []string{}, Flags: fs}); err == nil ||
		!strings.Contains(err.Error(), `from flag --registry-meta sets meta key "zone" twice`) {
		t.Fatalf("a key repeated across flags: %v", err)
	}
	if !strings.Contains(fs.FlagUsages(), "--registry-meta key=value,...") {
		t.Errorf("usage:\n%s", fs.FlagUsages())
	}
	found := false
	for _, k := range config.SharedRegistryKeys() {
		found = found || k == "registry.meta"
	}
	if !found {
		t.Errorf("SharedRegistryKeys %v lacks registry.meta", config.SharedRegistryKeys())
	}
}

// TestRegistryMetaRefused: a bad registry.meta fails Load naming the key,
// the value, its source and the rule, from every source; a reserved key
// names the meta key and why.
func TestRegistryMetaRefused(t *testing.T) {
	long := strings.Repeat("v", 513)
	var many []string
	for i := range 61 {
		many = append(many, "k"+strings.Repeat("x", i)+"=v")
	}
	for _, tc := range []struct{ value, want string }{
		{"drainkit_ready_at=2020-01-01T00:00:00Z", `registry.meta: "drainkit_ready_at=2020-01-01T00:00:00Z" from env DRAINKIT_REGISTRY_META is not valid (meta key "drainkit_ready_at" is reserved: drainkit writes its own drainkit_* keys`},
		{"zone=a,drainkit_endpoints=x", `meta key "drainkit_endpoints" is reserved`},
		{"kind=grpc", `meta key "kind" is reserved: the Nacos registrar writes`},
		{"nacos_weight=3", `meta key "nacos_weight" is reserved`},
		{"consul-network-segment=x", `meta key "consul-network-segment" is reserved: Consul reserves`},
		{"Zone=a", `meta key "Zone" must be 1 to 128 lower-case letters`},
		{"zone a=b", `meta key "zone a" must be`},
		{"=a", `meta key "" must be`},
		{strings.Repeat("k", 129) + "=a", `must be 1 to 128`},
		{"zone=" + long, `the value of meta key "zone" has 513 bytes: at most 512`},
		{"zone=a\tb", `must not contain ',' (it separates the pairs) or control characters`},
		{"zone=a\u0085", `must not contain ',' (it separates the pairs) or control characters`},
		// JSON (Consul's, etcd's, Nacos's) turns each invalid byte into U+FFFD.
		{"zone=a\xffb", `the value of meta key "zone" is not valid UTF-8`},
		{"zone", `registry.meta: "zone" from env DRAINKIT_REGISTRY_META has item "zone" without '='`},
		{"zone=a,zone=b", `sets meta key "zone" twice`},
		{strings.Join(many, ","), "has 61 pairs: at most 60"},
	} {
		_, err := config.Load(config.Sources{Env: []string{"DRAINKIT_REGISTRY_META=" + tc.value}})
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Key != "registry.meta" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40q: err = %v, want %q", tc.value, err, tc.want)
		}
	}
	for name, tc := range map[string]struct{ content, want string }{
		"number.yaml":   {"registry:\n  meta:\n    version: 1.10\n", `has meta key "version" set to a number, not a string (quote it)`},
		"upper.yaml":    {"registry:\n  meta:\n    Zone: a\n", `meta key "Zone" must be 1 to 128 lower-case`},
		"reserved.json": {`{"registry": {"meta": {"kind": "http"}}}`, `registry.meta: "kind=http" from file`},
		"list.yaml":     {"registry:\n  meta: [zone, a]\n", "is a list, not key=value pairs"},
	} {
		_, err := config.Load(config.Sources{Env: []string{}, File: writeFile(t, name, tc.content)})
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Key != "registry.meta" || !strings.Contains(err.Error(), tc.want) || ce.Source.Kind != config.FromFile {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
	// A reserved key in a value a higher source overrides fails too.
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	config.BindFlags(fs)
	if err := fs.Parse([]string{"--registry-meta=zone=b"}); err != nil {
		t.Fatal(err)
	}
	_, err := config.Load(config.Sources{Env: []string{"DRAINKIT_REGISTRY_META=drainkit_managed=x"}, Flags: fs})
	if err == nil || !strings.Contains(err.Error(), "from env DRAINKIT_REGISTRY_META is not valid") {
		t.Errorf("overridden env: %v", err)
	}
}

// TestRegistryMetaThroughViper: an application's viper file keeps the meta
// keys' case for the check (viper lower-cases a table's keys), and a valid
// table loads under drainkit.registry.meta.
func TestRegistryMetaThroughViper(t *testing.T) {
	load := func(content string) (*config.Config, error) {
		v := viper.New()
		v.SetConfigFile(writeFile(t, "app.yaml", content))
		if err := v.ReadInConfig(); err != nil {
			t.Fatal(err)
		}
		return config.Load(config.Sources{Viper: v})
	}
	c, err := load("drainkit:\n  registry:\n    meta:\n      zone: a\n")
	if err != nil || !maps.Equal(c.Registry.Meta, map[string]string{"zone": "a"}) || c.Source("registry.meta").Kind != config.FromFile {
		t.Fatalf("%v %v %v", err, c, c.Source("registry.meta"))
	}
	if _, err := load("drainkit:\n  registry:\n    meta:\n      Zone: a\n"); err == nil || !strings.Contains(err.Error(), `meta key "Zone" must be`) {
		t.Errorf("upper-case key through viper: %v", err)
	}
}
