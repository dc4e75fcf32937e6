package config_test

import (
	"bytes"
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/drainkit/drainkit/config"
)

// TestDuplicateKeysThroughViper: the file is read through viper, and a key
// set twice (nested and dotted, or in two letter cases) fails naming both
// spellings, in every format, where viper alone keeps one of the values
// without a word.
func TestDuplicateKeysThroughViper(t *testing.T) {
	for _, tc := range []struct{ name, content, format, want string }{
		{"c.yaml", "propagation: {min: 5s}\npropagation.min: 6s\n", "yaml",
			`sets propagation.min twice, as "propagation.min" and as "propagation: {min}"`},
		{"c.yml", "Propagation:\n  Min: 5s\npropagation:\n  min: 6s\n", "yaml",
			`sets propagation.min twice, as "Propagation: {Min}" and as "propagation: {min}"`},
		{"c.toml", "[Propagation]\nmin = \"5s\"\n[propagation]\nmin = \"6s\"\n", "toml",
			`sets propagation.min twice, as "Propagation: {min}" and as "propagation: {min}"`},
		{"c.json", `{"registry": {"etcd": {"ttl": "6s"}}, "registry.etcd.TTL": "9s"}`, "json",
			`sets registry.etcd.ttl twice, as "registry.etcd.TTL" and as "registry: {etcd: {ttl}}"`},
		{"c.json", `{"grace_period": "30s", "GRACE_PERIOD": "40s"}`, "json",
			`sets grace_period twice, as "GRACE_PERIOD" and as "grace_period"`},
	} {
		t.Run(tc.name+" "+tc.want[:24], func(t *testing.T) {
			// The premise: viper on its own folds the two spellings into one.
			plain := viper.New()
			plain.SetConfigType(tc.format)
			if err := plain.ReadConfig(strings.NewReader(tc.content)); err != nil {
				t.Fatalf("viper rejects it on its own: %v", err)
			}
			_, err := config.Load(config.Sources{File: writeFile(t, tc.name, tc.content), Env: []string{}})
			var ce *config.Error
			if !errors.As(err, &ce) || ce.Key != config.KeyConfig || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a config error containing %s", err, tc.want)
			}
		})
	}
}

// TestEnvListMatchesViper: the process environment, read through viper's
// env binding, and the same variables given as Sources.Env load the same
// settings from the same variables.
func TestEnvListMatchesViper(t *testing.T) {
	var list []string
	for _, kv := range strings.Fields(config.Default().String()) {
		k, v, _ := strings.Cut(kv, "=")
		if v == "" || strings.HasPrefix(v, "[") { // empty, or a secret's [unset]
			continue
		}
		if k == "grace_period" {
			v = "26s"
		}
		list = append(list, config.EnvVar(k)+"="+v)
	}
	list = append(list, "DRAINKIT_ADMIN_TOKEN=tok", "DRAINKIT_REGISTRY_SERVICE=svc")
	for _, kv := range list {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	fromList, err := config.Load(config.Sources{Env: list})
	if err != nil {
		t.Fatal(err)
	}
	fromViper, err := config.Load(config.Sources{})
	if err != nil {
		t.Fatal(err)
	}
	if fromViper.String() != fromList.String() || fromViper.Timings.GracePeriod != 26*time.Second ||
		fromViper.Admin.Token != "tok" || fromViper.Registry.Service != "svc" {
		t.Fatalf("process environment: %s\nlist: %s", fromViper, fromList)
	}
	for _, kv := range list {
		name, _, _ := strings.Cut(kv, "=")
		k := strings.ToLower(strings.TrimPrefix(name, "DRAINKIT_"))
		for _, key := range config.Keys() {
			if config.EnvVar(key) == name {
				k = key
			}
		}
		want := config.Source{Kind: config.FromEnv, Name: name}
		if fromViper.Source(k) != want || fromList.Source(k) != want {
			t.Errorf("%s: from %v (process) and %v (list), want %v", k, fromViper.Source(k), fromList.Source(k), want)
		}
	}
	t.Setenv("DRAINKIT_PROPAGATION_MIN", "banana")
	if _, err := config.Load(config.Sources{}); err == nil ||
		!strings.HasPrefix(err.Error(), `propagation.min: "banana" from env DRAINKIT_PROPAGATION_MIN is not a duration`) {
		t.Errorf("err = %v", err)
	}
}

// appViper builds an application's configuration the way a cobra program
// does: its own flag --listen and drainkit's (BindFlags) parsed from args,
// an env prefix GREETER with AutomaticEnv and the key replacer, its flags
// bound with BindPFlags, drainkit's with BindViper, and its file.
func appViper(t *testing.T, file string, args ...string) (*viper.Viper, *pflag.FlagSet) {
	t.Helper()
	return appViperAt(t, "", file, args...)
}

// appViperAt is appViper with drainkit's keys bound under the sub-tree sub
// ("" for DefaultViperKey).
func appViperAt(t *testing.T, sub, file string, args ...string) (*viper.Viper, *pflag.FlagSet) {
	t.Helper()
	fs := pflag.NewFlagSet("greeter", pflag.ContinueOnError)
	fs.String("listen", "127.0.0.1:8080", "the application's own flag")
	config.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	v := viper.New()
	v.SetEnvPrefix("GREETER")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_", "-", "_"))
	v.AutomaticEnv()
	if err := v.BindPFlags(fs); err != nil {
		t.Fatal(err)
	}
	config.BindViper(v, fs, sub)
	if file != "" {
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			t.Fatal(err)
		}
	}
	return v, fs
}

// TestViperPrecedence: drainkit's keys under the drainkit: sub-tree of an
// application's viper configuration take the application's precedence (Set,
// flags, env, file, SetDefault) over drainkit's defaults, and each names
// its source.
func TestViperPrecedence(t *testing.T) {
	file := writeFile(t, "greeter.yaml", "listen: 127.0.0.1:9090\nserver: {port: 1}\nserver.port: 2\n"+ // the app's own, even set twice
		"drainkit:\n  propagation:\n    min: 2s\n    quiet: 500ms\n  drain:\n    timeout: 4s\n  admin:\n    metrics: true\n"+
		"Drainkit.checks.success_threshold: 7\n")
	t.Setenv("GREETER_DRAINKIT_PROPAGATION_MIN", "3s")
	t.Setenv("GREETER_DRAINKIT_PROPAGATION_QUIET", "700ms")
	t.Setenv("DRAINKIT_GRACE_PERIOD", "40s") // drainkit's own variable: not read here
	v, fs := appViper(t, file, "--propagation-min=4s", "--admin-addr=127.0.0.1:0")
	v.Set("drainkit.checks.failure_threshold", 2)
	v.SetDefault("drainkit.stop.timeout", 2*time.Second)
	c, err := config.Load(config.Sources{Viper: v, Flags: fs})
	if err != nil {
		t.Fatal(err)
	}
	check := func(key string, got, want any, src string) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
		if s := c.Source(key).String(); s != src {
			t.Errorf("%s from %q, want %q", key, s, src)
		}
	}
	check("propagation.min", c.Timings.PropagationMin, 4*time.Second, "flag --propagation-min")
	check("propagation.quiet", c.Timings.PropagationQuiet, 700*time.Millisecond, "env GREETER_DRAINKIT_PROPAGATION_QUIET")
	check("drain.timeout", c.Timings.DrainTimeout, 4*time.Second, "file "+file+" at drainkit.drain.timeout")
	check("admin.metrics", c.Admin.Metrics, true, "file "+file+" at drainkit.admin.metrics")
	check("checks.success_threshold", c.Checks.SuccessThreshold, 7, "file "+file+" at drainkit.checks.success_threshold")
	check("checks.failure_threshold", c.Checks.FailureThreshold, 2, "viper key drainkit.checks.failure_threshold")
	check("stop.timeout", c.Timings.StopTimeout, 2*time.Second, "viper key drainkit.stop.timeout")
	check("admin.addr", c.Admin.Addr, "127.0.0.1:0", "flag --admin-addr")
	check("grace_period", c.Timings.GracePeriod, 25*time.Second, "default")
	if v.GetString("listen") != "127.0.0.1:9090" {
		t.Errorf("the application's own key: listen = %q", v.GetString("listen"))
	}
	if w := c.Warnings(); !slices.Contains(w, config.Warning{Var: "DRAINKIT_GRACE_PERIOD", Suggestion: "GREETER_DRAINKIT_GRACE_PERIOD"}) {
		t.Errorf("Warnings = %+v, want one for DRAINKIT_GRACE_PERIOD suggesting GREETER_DRAINKIT_GRACE_PERIOD", w)
	}

	// Another sub-tree, no file, and a flag named after its viper key bound
	// with BindPFlags alone: the variable follows the key, the flag is named.
	t.Setenv("GREETER_OPS_DRAINKIT_DRAIN_TIMEOUT", "5s")
	fs2 := pflag.NewFlagSet("ops", pflag.ContinueOnError)
	fs2.String("ops.drainkit.registry.service", "", "a flag named after its viper key")
	if err := fs2.Parse([]string{"--ops.drainkit.registry.service=greeter"}); err != nil {
		t.Fatal(err)
	}
	v2 := viper.New()
	v2.SetEnvPrefix("GREETER")
	if err := v2.BindPFlags(fs2); err != nil {
		t.Fatal(err)
	}
	config.BindViper(v2, nil, "ops.drainkit")
	c, err = config.Load(config.Sources{Viper: v2, ViperKey: "Ops.Drainkit", Flags: fs2})
	if err != nil {
		t.Fatal(err)
	}
	check("drain.timeout", c.Timings.DrainTimeout, 5*time.Second, "env GREETER_OPS_DRAINKIT_DRAIN_TIMEOUT")
	check("registry.service", c.Registry.Service, "greeter", "flag --ops.drainkit.registry.service")
}

// TestViperBadValues: a bad value in the application's configuration fails
// Load like one of drainkit's own sources, naming the key, the value, the
// layer it came from and the allowed range, even when a higher layer
// overrides it.
func TestViperBadValues(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		env, args  []string
		set        map[string]any
		want       string
	}{
		{name: "env", env: []string{"GREETER_DRAINKIT_PROPAGATION_MIN=banana"},
			want: `propagation.min: "banana" from env GREETER_DRAINKIT_PROPAGATION_MIN is not a duration (want e.g. 5s; range >= 0s, <= propagation.max)`},
		{name: "flag not cast by viper", args: []string{"--checks-failure-threshold=many"},
			want: `checks.failure_threshold: "many" from flag --checks-failure-threshold is not an integer (range 1..1000)`},
		{name: "file", file: "drainkit:\n  propagation:\n    quiet: 5\n",
			want: `propagation.quiet: 5 from file FILE at drainkit.propagation.quiet has no unit (a duration needs a unit, e.g. 5s; range >= 0s, <= propagation.max)`},
		{name: "file string under a flag", file: "drainkit:\n  admin:\n    addr: nope\n", args: []string{"--admin-addr=127.0.0.1:0"},
			want: `admin.addr: "nope" from file FILE at drainkit.admin.addr is not valid (must be host:port with a numeric port 0..65535, e.g. :8081 or 127.0.0.1:8081)`},
		{name: "env under Set", env: []string{"GREETER_DRAINKIT_REGISTRY_SERVICE=bad name"}, set: map[string]any{"drainkit.registry.service": "good"},
			want: `registry.service: "bad name" from env GREETER_DRAINKIT_REGISTRY_SERVICE is not valid`},
		{name: "Set out of budget", set: map[string]any{"drainkit.grace_period": 5 * time.Second},
			want: `grace_period: 5s from viper key drainkit.grace_period is out of range (must be >= 24s: propagation.max + drain.timeout + stop.timeout`},
		{name: "unknown key", file: "drainkit:\n  propagation:\n    mn: 5s\n",
			want: `drainkit.propagation.mn: from file FILE is not a known key (did you mean drainkit.propagation.min?)`},
		{name: "nested and dotted", file: "drainkit:\n  propagation: {min: 5s}\ndrainkit.propagation.min: 6s\n",
			want: `sets drainkit.propagation.min twice, as "drainkit.propagation.min" and as "drainkit: {propagation: {min}}"`},
		{name: "two cases", file: "Drainkit:\n  grace_period: 30s\ndrainkit:\n  GRACE_PERIOD: 40s\n",
			want: `sets drainkit.grace_period twice, as "Drainkit: {grace_period}" and as "drainkit: {GRACE_PERIOD}"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := ""
			if tc.file != "" {
				file = writeFile(t, "greeter.yaml", tc.file)
			}
			for _, kv := range tc.env {
				k, v, _ := strings.Cut(kv, "=")
				t.Setenv(k, v)
			}
			v, fs := appViper(t, file, tc.args...)
			for k, x := range tc.set {
				v.Set(k, x)
			}
			_, err := config.Load(config.Sources{Viper: v, Flags: fs})
			var ce *config.Error
			want := strings.ReplaceAll(tc.want, "FILE", file)
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), want) {
				t.Fatalf("err = %v\nwant a *config.Error containing %s", err, want)
			}
		})
	}
	if _, err := config.Load(config.Sources{Viper: viper.New(), Env: []string{}}); err == nil {
		t.Error("Sources.Env with Sources.Viper: no error")
	}
}

// TestOnlyConfigImportsViper: config is the one package of the module that
// imports viper (the examples are applications, free to use it), so a
// program pays for viper only through config.
func TestOnlyConfigImportsViper(t *testing.T) {
	cmd := exec.Command("go", "list", "-e", "-f", "{{.ImportPath}}:{{range .Imports}} {{.}}{{end}}{{range .TestImports}} {{.}}{{end}}{{range .XTestImports}} {{.}}{{end}}", "./...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.Bytes())
	}
	importers := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		uses := false
		for _, imp := range strings.Fields(imports) {
			if imp == "github.com/spf13/viper" || strings.HasPrefix(imp, "github.com/spf13/viper/") {
				uses = true
			}
			if strings.HasPrefix(imp, "github.com/spf13/viper/remote") {
				t.Errorf("%s imports %s: no remote provider", pkg, imp)
			}
		}
		switch {
		case !uses:
		case pkg == "github.com/drainkit/drainkit/config":
			importers++
		case strings.HasPrefix(pkg, "github.com/drainkit/drainkit/examples/"):
		default:
			t.Errorf("%s imports viper; only config may", pkg)
		}
	}
	if importers != 1 {
		t.Errorf("config does not import viper")
	}
}

// TestFlagsNotCastByViper: flags reach viper as text, so its lenient casts
// (cast.ToInt("many") is 0, cast.ToBool("maybe") is false) never hide a bad
// value; Load converts it and says what is wrong.
func TestFlagsNotCastByViper(t *testing.T) {
	for _, tc := range []struct{ arg, want string }{
		{"--checks-failure-threshold=many", `checks.failure_threshold: "many" from flag --checks-failure-threshold is not an integer (range 1..1000)`},
		{"--admin-metrics=maybe", `admin.metrics: "maybe" from flag --admin-metrics is not a boolean (true or false)`},
	} {
		_, err := config.Load(config.Sources{Env: []string{}, Flags: flags(t, tc.arg)})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: err = %v, want %s", tc.arg, err, tc.want)
		}
	}
}
