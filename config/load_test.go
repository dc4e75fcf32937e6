package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/spf13/pflag"
)

// writeFile writes content to a file named name in a fresh temp dir.
func writeFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// flags returns a parsed flag set with BindFlags applied.
func flags(t testing.TB, args ...string) *pflag.FlagSet {
	t.Helper()
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	config.BindFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return fs
}

func TestDefaults(t *testing.T) {
	c, err := config.Load(config.Sources{Env: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Timings != budget.DefaultTimings() || c.Checks != budget.DefaultCheckOptions() {
		t.Errorf("defaults: got %+v %+v", c.Timings, c.Checks)
	}
	if c.String() != config.Default().String() {
		t.Errorf("Load() = %s, want %s", c, config.Default())
	}
	if got := c.Source("propagation.min"); got.Kind != config.FromDefault || got.String() != "default" {
		t.Errorf("Source = %v", got)
	}
	if _, err := lifecycle.New(c.LifecycleOptions()); err != nil {
		t.Errorf("lifecycle.New(defaults): %v", err)
	}
}

func TestBadInputs(t *testing.T) {
	type tc struct {
		name   string
		file   string // "name.ext\ncontent"; "" for none
		noFile string // path of a file that does not exist
		env    []string
		args   []string
		key    string   // the key the error must name
		want   []string // further substrings of the message
	}
	missing := filepath.Join(t.TempDir(), "nope.yaml")
	cases := []tc{
		{name: "banana env", env: []string{"DRAINKIT_PROPAGATION_MIN=banana"}, key: "propagation.min",
			want: []string{`"banana"`, "env DRAINKIT_PROPAGATION_MIN", "is not a duration", "e.g. 5s", "<= propagation.max"}},
		{name: "negative", env: []string{"DRAINKIT_DRAIN_TIMEOUT=-1s"}, key: "drain.timeout",
			want: []string{`"-1s"`, "env DRAINKIT_DRAIN_TIMEOUT", "out of range", "> 0"}},
		{name: "zero not allowed", args: []string{"--stop-timeout=0"}, key: "stop.timeout",
			want: []string{`"0"`, "flag --stop-timeout", "> 0"}},
		{name: "zero grace", file: "c.yaml\ngrace_period: 0s\n", key: "grace_period", want: []string{`"0s"`, "file "}},
		{name: "min > max", file: "c.yaml\npropagation:\n  min: 20s\n  max: 10s\n", key: "propagation.min",
			want: []string{`"20s"`, "<= propagation.max (10s)", "propagation.max 10s from file"}},
		{name: "quiet > max", env: []string{"DRAINKIT_PROPAGATION_QUIET=2s", "DRAINKIT_PROPAGATION_MIN=0", "DRAINKIT_PROPAGATION_MAX=1s"},
			key: "propagation.quiet", want: []string{`"2s"`, "<= propagation.max (1s)"}},
		{name: "budget overflow", env: []string{"DRAINKIT_PROPAGATION_MAX=25s"}, key: "grace_period",
			want: []string{`"25s" (default)`, "propagation.max + drain.timeout + stop.timeout", "propagation.max 25s from env DRAINKIT_PROPAGATION_MAX"}},
		{name: "unknown key in file", file: "c.yaml\npropagation:\n  mn: 5s\n", key: "propagation.mn",
			want: []string{"is not a known key", "did you mean propagation.min?"}},
		{name: "two unknown keys, both reported", file: "c.yaml\npropagation:\n  mn: 5s\ndrain:\n  timout: 3s\n", key: "drain.timout",
			want: []string{"drain.timout: from file", "did you mean drain.timeout?", "; propagation.mn: from file", "did you mean propagation.min?"}},
		{name: "two values out of range, both reported", file: "c.yaml\nstop:\n  timeout: -1s\ndrain:\n  timeout: -1s\n", key: "drain.timeout",
			want: []string{`drain.timeout: "-1s" from file`, `; stop.timeout: "-1s" from file`, "> 0"}},
		{name: "two values not durations, both reported", env: []string{"DRAINKIT_PROPAGATION_MIN=banana", "DRAINKIT_CHECKS_FAILURE_THRESHOLD=many"},
			key: "propagation.min", want: []string{"is not a duration", `; checks.failure_threshold: "many" from env`, "is not an integer"}},
		{name: "a timing and a check out of range, both reported", env: []string{"DRAINKIT_GRACE_PERIOD=0s", "DRAINKIT_CHECKS_FAILURE_THRESHOLD=0"},
			key: "grace_period", want: []string{"> 0", `; checks.failure_threshold: "0" from env`, "between 1 and 1000"}},
		{name: "unknown key and a bad value, both reported", file: "c.yaml\npropagation:\n  mn: 5s\ndrain:\n  timeout: banana\n", key: "propagation.mn",
			want: []string{"did you mean propagation.min?", `; drain.timeout: "banana" from file`, "is not a duration"}},
		{name: "unknown key and a value out of range, both reported", file: "c.yaml\npropagation:\n  mn: 5s\nstop:\n  timeout: -1s\n", key: "propagation.mn",
			want: []string{"did you mean propagation.min?", `; stop.timeout: "-1s" from file`}},
		{name: "unknown top-level key", file: "c.json\n{\"timeouts\": {\"x\": 1}}", key: "timeouts.x",
			want: []string{"is not a known key", "known keys: warmup.timeout"}},
		{name: "wrong type list", file: "c.yaml\npropagation:\n  min: [1, 2]\n", key: "propagation.min",
			want: []string{"is a list, not a duration"}},
		{name: "wrong type string for int", file: "c.toml\n[checks]\nfailure_threshold = \"many\"\n", key: "checks.failure_threshold",
			want: []string{`"many"`, "is not an integer", "1..1000"}},
		{name: "wrong type bool", file: "c.yaml\nadmin:\n  metrics: maybe\n", key: "admin.metrics",
			want: []string{`"maybe"`, "is not a boolean"}},
		{name: "wrong type table for string", file: "c.yaml\nadmin:\n  addr: {host: x}\n", key: "admin.addr",
			want: []string{"is a table, not a string"}},
		{name: "empty file", file: "c.yaml\n  \n", key: config.KeyConfig, want: []string{"is empty", "Sources.File"}},
		{name: "comments only", file: "c.yaml\n# nothing\n", key: config.KeyConfig, want: []string{"has no settings"}},
		{name: "missing file", noFile: missing, key: config.KeyConfig, want: []string{"does not exist", "nope.yaml"}},
		{name: "missing file from flag", args: []string{"--config", missing}, key: config.KeyConfig, want: []string{"flag --config"}},
		{name: "missing file from env", env: []string{"DRAINKIT_CONFIG=" + missing}, key: config.KeyConfig, want: []string{"env DRAINKIT_CONFIG"}},
		{name: "unsupported extension", file: "c.ini\na=b\n", key: config.KeyConfig, want: []string{`unsupported extension ".ini"`}},
		{name: "syntax error", file: "c.json\n{\"propagation\": ", key: config.KeyConfig, want: []string{"is not valid json"}},
		{name: "unknown unit", env: []string{"DRAINKIT_PROPAGATION_MAX=5 fortnights"}, key: "propagation.max",
			want: []string{`"5 fortnights"`, `unknown unit "fortnights"`}},
		{name: "unknown unit days", file: "c.yaml\nwarmup:\n  timeout: 1d\n", key: "warmup.timeout", want: []string{`unknown unit "d"`}},
		{name: "huge value", env: []string{"DRAINKIT_WARMUP_TIMEOUT=25h"}, key: "warmup.timeout", want: []string{`"25h"`, "<= 24h"}},
		{name: "overflow", env: []string{"DRAINKIT_GRACE_PERIOD=9999999999h"}, key: "grace_period", want: []string{"is too large", "at most 24h"}},
		{name: "overflow int", env: []string{"DRAINKIT_CHECKS_SUCCESS_THRESHOLD=99999999999999999999"}, key: "checks.success_threshold",
			want: []string{"is too large"}},
		{name: "negative threshold", env: []string{"DRAINKIT_CHECKS_FAILURE_THRESHOLD=-3"}, key: "checks.failure_threshold",
			want: []string{`"-3"`, "between 1 and 1000"}},
		{name: "zero threshold from file", file: "c.json\n{\"checks\": {\"failure_threshold\": 0}}", key: "checks.failure_threshold"},
		{name: "fractional threshold", file: "c.json\n{\"checks\": {\"success_threshold\": 4.5}}", key: "checks.success_threshold",
			want: []string{"is not an integer"}},
		{name: "success <= failure", args: []string{"--checks-success-threshold=3"}, key: "checks.success_threshold",
			want: []string{"> checks.failure_threshold (3)"}},
		{name: "no unit", env: []string{"DRAINKIT_PROPAGATION_MIN=5"}, key: "propagation.min",
			want: []string{"has no unit", "a duration needs a unit, e.g. 5s"}},
		{name: "no unit in file number", file: "c.yaml\npropagation:\n  quiet: 2\n", key: "propagation.quiet", want: []string{"has no unit"}},
		{name: "no unit after second number", env: []string{"DRAINKIT_STOP_TIMEOUT=1m30"}, key: "stop.timeout", want: []string{"has no unit"}},
		{name: "timeout > interval", env: []string{"DRAINKIT_CHECKS_TIMEOUT=6s"}, key: "checks.timeout", want: []string{"<= checks.interval (5s)"}},
		{name: "bad addr", env: []string{"DRAINKIT_ADMIN_ADDR=8081"}, key: "admin.addr", want: []string{`"8081"`, "host:port"}},
		{name: "bad port", args: []string{"--admin-addr=:99999"}, key: "admin.addr"},
		{name: "heartbeat > ttl/3", file: "c.yaml\nregistry:\n  ttl: 6s\n  heartbeat_interval: 3s\n", key: "registry.heartbeat_interval",
			want: []string{`"3s" from file`, "registry.ttl / 3 (2s)", "registry.ttl 6s from file"}},
		{name: "negative heartbeat", env: []string{"DRAINKIT_REGISTRY_HEARTBEAT_INTERVAL=-1s"}, key: "registry.heartbeat_interval"},
		{name: "ttl too short", env: []string{"DRAINKIT_REGISTRY_TTL=500ms"}, key: "registry.ttl", want: []string{">= 1s"}},
		{name: "critical after < 1m", env: []string{"DRAINKIT_REGISTRY_DEREGISTER_CRITICAL_SERVICE_AFTER=30s"},
			key: "registry.deregister_critical_service_after", want: []string{">= 1m"}},
		{name: "call timeout", env: []string{"DRAINKIT_REGISTRY_CALL_TIMEOUT=4s"}, key: "registry.call_timeout",
			want: []string{"<= registry.heartbeat_interval (3.333333333s)"}},
		{name: "deregister timeout", env: []string{"DRAINKIT_REGISTRY_DEREGISTER_TIMEOUT=-5s"}, key: "registry.deregister_timeout"},
		{name: "service name", env: []string{"DRAINKIT_REGISTRY_SERVICE=my service"}, key: "registry.service"},
		{name: "empty string value in file", file: "c.yaml\ndrain:\n  timeout: \"\"\n", key: "drain.timeout", want: []string{"is empty"}},
		{name: "bad in overridden file still fails", file: "c.yaml\npropagation:\n  min: banana\n",
			args: []string{"--propagation-min=1s"}, key: "propagation.min", want: []string{"from file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := config.Sources{Env: c.env}
			if s.Env == nil {
				s.Env = []string{}
			}
			if c.file != "" {
				name, content, _ := strings.Cut(c.file, "\n")
				s.File = writeFile(t, name, content)
			}
			if c.noFile != "" {
				s.File = c.noFile
			}
			s.Flags = flags(t, c.args...)
			cfg, err := config.Load(s)
			if err == nil {
				t.Fatalf("Load succeeded: %s", cfg)
			}
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %T %v is not a *config.Error", err, err)
			}
			msg := err.Error()
			if ce.Key != c.key || !strings.HasPrefix(msg, c.key+": ") {
				t.Errorf("error names key %q, want %q: %s", ce.Key, c.key, msg)
			}
			if strings.ContainsAny(msg, "\n\r") {
				t.Errorf("error is not one line: %q", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			t.Log(msg)
		})
	}
}

func TestRangeErrorIsWrapped(t *testing.T) {
	_, err := config.Load(config.Sources{Env: []string{"DRAINKIT_PROPAGATION_MIN=-1s"}})
	var re *budget.RangeError
	if !errors.As(err, &re) || re.Key != "propagation.min" {
		t.Fatalf("want a wrapped *budget.RangeError for propagation.min, got %v", err)
	}
}

func TestPrecedence(t *testing.T) {
	file := writeFile(t, "c.yaml", "propagation:\n  min: 2s\n  quiet: 500ms\ndrain:\n  timeout: 4s\nchecks:\n  failure_threshold: 2\nadmin:\n  metrics: true\n")
	env := []string{
		"DRAINKIT_PROPAGATION_MIN=3s", "DRAINKIT_PROPAGATION_QUIET=700ms",
		"DRAINKIT_CHECKS_FAILURE_THRESHOLD=4", "DRAINKIT_CHECKS_SUCCESS_THRESHOLD=6",
		"OTHER=1", "DRAINKIT_PROPAGATION_MIN=9s", // the first occurrence wins, as with os.Getenv
		"DRAINKIT_UNRELATED=x",
	}
	c, err := config.Load(config.Sources{File: file, Env: env, Flags: flags(t, "--propagation-min=4s", "--admin-addr=127.0.0.1:0")})
	if err != nil {
		t.Fatal(err)
	}
	check := func(key string, got, want any, src config.SourceKind) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", key, got, want)
		}
		if s := c.Source(key); s.Kind != src {
			t.Errorf("%s from %v, want kind %v", key, s, src)
		}
	}
	check("propagation.min", c.Timings.PropagationMin, 4*time.Second, config.FromFlag)           // flag > env > file
	check("propagation.quiet", c.Timings.PropagationQuiet, 700*time.Millisecond, config.FromEnv) // env > file
	check("drain.timeout", c.Timings.DrainTimeout, 4*time.Second, config.FromFile)               // file > default
	check("stop.timeout", c.Timings.StopTimeout, 3*time.Second, config.FromDefault)              // default
	check("checks.failure_threshold", c.Checks.FailureThreshold, 4, config.FromEnv)
	check("checks.success_threshold", c.Checks.SuccessThreshold, 6, config.FromEnv)
	check("admin.metrics", c.Admin.Metrics, true, config.FromFile)
	check("admin.addr", c.Admin.Addr, "127.0.0.1:0", config.FromFlag)
	if s := c.Source("propagation.min").String(); s != "flag --propagation-min" {
		t.Errorf("Source = %q", s)
	}
	if s := c.Source(config.KeyConfig).String(); s != "Sources.File" {
		t.Errorf("config Source = %q", s)
	}
}

func TestFlagDefaultsDoNotOverride(t *testing.T) {
	// A flag that is defined but not set must not hide the environment.
	c, err := config.Load(config.Sources{Env: []string{"DRAINKIT_GRACE_PERIOD=40s"}, Flags: flags(t)})
	if err != nil {
		t.Fatal(err)
	}
	if c.Timings.GracePeriod != 40*time.Second {
		t.Errorf("grace_period = %v, want 40s from env", c.Timings.GracePeriod)
	}
}

func TestConfigFileFromFlagAndEnv(t *testing.T) {
	a := writeFile(t, "a.toml", "[drain]\ntimeout = \"5s\"\n")
	b := writeFile(t, "b.json", `{"drain": {"timeout": "6s"}}`)
	c, err := config.Load(config.Sources{File: "/does/not/matter.yaml", Env: []string{"DRAINKIT_CONFIG=" + a}})
	if err != nil || c.Timings.DrainTimeout != 5*time.Second {
		t.Fatalf("env DRAINKIT_CONFIG: %v %v", c, err)
	}
	c, err = config.Load(config.Sources{Env: []string{"DRAINKIT_CONFIG=" + a}, Flags: flags(t, "--config", b)})
	if err != nil || c.Timings.DrainTimeout != 6*time.Second {
		t.Fatalf("flag --config: %v %v", c, err)
	}
	if got := c.Source("drain.timeout").String(); got != "file "+b {
		t.Errorf("Source = %q", got)
	}
}

func TestFileFormats(t *testing.T) {
	for _, f := range []struct{ name, content string }{
		{"c.yaml", "propagation:\n  max: 12s\nchecks:\n  failure_threshold: 2\nadmin:\n  metrics: true\n"},
		{"c.yml", "propagation.max: 12s\nchecks.failure_threshold: \"2\"\nadmin.metrics: \"true\"\n"},
		{"c.toml", "[propagation]\nmax = \"12s\"\n[checks]\nfailure_threshold = 2\n[admin]\nmetrics = true\n"},
		{"c.json", `{"Propagation": {"Max": "12s"}, "checks": {"failure_threshold": 2}, "admin": {"metrics": true}}`},
	} {
		c, err := config.Load(config.Sources{File: writeFile(t, f.name, f.content), Env: []string{}})
		if err != nil {
			t.Errorf("%s: %v", f.name, err)
			continue
		}
		if c.Timings.PropagationMax != 12*time.Second || c.Checks.FailureThreshold != 2 || !c.Admin.Metrics {
			t.Errorf("%s: got %s", f.name, c)
		}
	}
}

func TestDurationsAccepted(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"0": 0, "0s": 0, "1m30s": 90 * time.Second, " 250ms ": 250 * time.Millisecond, "1.5s": 1500 * time.Millisecond, "24h": 24 * time.Hour,
	} {
		key := "DRAINKIT_WARMUP_TIMEOUT"
		if want == 0 {
			key = "DRAINKIT_PROPAGATION_MIN"
		}
		c, err := config.Load(config.Sources{Env: []string{key + "=" + in}})
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if got := c.Timings.WarmupTimeout; want != 0 && got != want {
			t.Errorf("%q = %v, want %v", in, got, want)
		}
		if got := c.Timings.PropagationMin; want == 0 && got != 0 {
			t.Errorf("%q = %v, want 0", in, got)
		}
	}
	// min, quiet and max all 0: no window.
	if _, err := config.Load(config.Sources{Env: []string{
		"DRAINKIT_PROPAGATION_MIN=0", "DRAINKIT_PROPAGATION_QUIET=0", "DRAINKIT_PROPAGATION_MAX=0"}}); err != nil {
		t.Errorf("no window: %v", err)
	}
}

func TestTokenNeverPrinted(t *testing.T) {
	const tok = "s3cr3t-T0KEN-value"
	c, err := config.Load(config.Sources{Env: []string{"DRAINKIT_ADMIN_TOKEN=" + tok}})
	if err != nil {
		t.Fatal(err)
	}
	if string(c.Admin.Token) != tok {
		t.Fatalf("token not loaded")
	}
	for _, s := range []string{c.String(), c.Admin.Token.String(), fmtAll(c), fmtAll(c.Admin), fmtAll(c.Admin.Token)} {
		if strings.Contains(s, tok) {
			t.Errorf("token printed: %s", s)
		}
	}
	// A bad token, and a bad value elsewhere with a token set, must not show it.
	for _, env := range [][]string{
		{"DRAINKIT_ADMIN_TOKEN=" + tok + " with space"},
		{"DRAINKIT_ADMIN_TOKEN=" + tok, "DRAINKIT_ADMIN_ADDR=nope"},
	} {
		_, err := config.Load(config.Sources{Env: env})
		if err == nil || strings.Contains(err.Error(), tok) {
			t.Errorf("err = %v", err)
		}
	}
	f := writeFile(t, "c.yaml", "admin:\n  token: [\""+tok+"\"]\n")
	if _, err := config.Load(config.Sources{File: f, Env: []string{}}); err == nil || strings.Contains(err.Error(), tok) {
		t.Errorf("err = %v", err)
	}
}

func TestExampleLoadsAsDefaults(t *testing.T) {
	ex := config.Example()
	c, err := config.Load(config.Sources{File: writeFile(t, "example.yaml", ex), Env: []string{}})
	if err != nil {
		t.Fatalf("Example does not load: %v\n%s", err, ex)
	}
	if c.String() != config.Default().String() {
		t.Errorf("Example loads as %s, want defaults %s", c, config.Default())
	}
	for _, k := range config.Keys() {
		if !strings.Contains(ex, config.EnvVar(k)) || !strings.Contains(ex, "--"+config.FlagName(k)) {
			t.Errorf("Example does not document %s", k)
		}
	}
	if want := "grace_period 25s >= propagation.max 12s + drain.timeout 6s + stop.timeout 3s + margin 2.5s = 23.5s (1.5s to spare)"; config.Default().Describe() != want {
		t.Errorf("Describe = %q", config.Default().Describe())
	}
}

func TestValidateInCode(t *testing.T) {
	c := config.Default()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	c.Timings.PropagationMax = time.Minute
	err := c.Validate()
	if err == nil || !strings.HasPrefix(err.Error(), "grace_period: \"25s\" (default) is out of range") {
		t.Errorf("err = %v", err)
	}
}

func TestBindFlagsHelp(t *testing.T) {
	fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fs.String("admin-addr", ":9", "the caller's own flag")
	config.BindFlags(fs)
	usage := fs.FlagUsages()
	for _, want := range []string{"--propagation-min duration", "(default 5s)", "DRAINKIT_PROPAGATION_MIN", "--config path", "--admin-metrics"} {
		if !strings.Contains(usage, want) {
			t.Errorf("usage lacks %q:\n%s", want, usage)
		}
	}
	if err := fs.Parse([]string{"--admin-metrics", "--admin-addr=127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(config.Sources{Flags: fs, Env: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Admin.Metrics || c.Admin.Addr != "127.0.0.1:1" {
		t.Errorf("got %s", c)
	}
}

// TestEverySourceChecked (issue 9 item 4): a bad string value fails even
// when a higher source overrides it, naming the source that set it; a file
// that sets one key both nested and dotted fails, naming both spellings.
func TestEverySourceChecked(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, file string
		env, args  []string
		want       []string
	}{
		{"admin.addr from env under a flag", "", []string{"DRAINKIT_ADMIN_ADDR=nope"}, []string{"--admin-addr=127.0.0.1:9"},
			[]string{"admin.addr", `"nope"`, "env DRAINKIT_ADMIN_ADDR"}},
		{"admin.token from file under env", "c.yaml\nadmin:\n  token: \"a b\"\n", []string{"DRAINKIT_ADMIN_TOKEN=good"}, nil,
			[]string{"admin.token", "file ", "printable ASCII"}},
		{"registry.service from file under a flag", "c.yaml\nregistry:\n  service: \"bad name\"\n", nil, []string{"--registry-service=good"},
			[]string{"registry.service", `"bad name"`, "file "}},
		{"nested and dotted", "c.yaml\npropagation: {min: 5s}\npropagation.min: 6s\n", nil, nil,
			[]string{"sets propagation.min twice", `"propagation.min"`, `"propagation: {min}"`}},
		{"case differs", "c.yaml\nPropagation: {min: 5s}\npropagation: {max: 6s}\nPROPAGATION: {min: 1s}\n", nil, nil,
			[]string{"sets propagation.min twice"}},
		{"json nested and dotted", "c.json\n{\"propagation\": {\"min\": \"5s\"}, \"propagation.min\": \"6s\"}", nil, nil,
			[]string{"sets propagation.min twice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := config.Sources{Env: tc.env}
			if tc.file != "" {
				name, body, _ := strings.Cut(tc.file, "\n")
				src.File = filepath.Join(dir, name)
				if err := os.WriteFile(src.File, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
			config.BindFlags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			src.Flags = fs
			_, err := config.Load(src)
			if err == nil {
				t.Fatal("Load accepted it")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// Issue 32: the lifecycle may end the window before propagation.min on
// evidence only when no source set it (Options.MinIsDefault); a min set
// anywhere, even to the default's value, holds the window.
func TestMinIsDefault(t *testing.T) {
	for _, c := range []struct {
		env  []string
		want bool
	}{
		{[]string{}, true},
		{[]string{"DRAINKIT_PROPAGATION_MIN=5s"}, false},
		{[]string{"DRAINKIT_PROPAGATION_MAX=10s"}, true},
	} {
		cfg, err := config.Load(config.Sources{Env: c.env})
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.LifecycleOptions().MinIsDefault; got != c.want {
			t.Errorf("env %v: MinIsDefault %v, want %v", c.env, got, c.want)
		}
	}
}

// propagation.evidence_dir reaches the lifecycle (issue 32's learned window).
func TestEvidenceDir(t *testing.T) {
	dir := t.TempDir()
	cfg, err := config.Load(config.Sources{Env: []string{"DRAINKIT_PROPAGATION_EVIDENCE_DIR=" + dir}})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.LifecycleOptions().EvidenceDir; got != dir {
		t.Fatalf("EvidenceDir %q, want %q", got, dir)
	}
	if cfg, _ := config.Load(config.Sources{Env: []string{}}); cfg.LifecycleOptions().EvidenceDir != "" {
		t.Fatal("EvidenceDir set by default")
	}
}
