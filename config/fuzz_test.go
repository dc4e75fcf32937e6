package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/drainkit/drainkit/config"
)

// FuzzLoad feeds arbitrary file contents (in each format) and environment
// values to Load. Load must never panic; it either returns a Config that
// validates (registry/consul's FuzzOptionsFrom checks that Consul accepts
// its registry settings), or an *Error naming a key in one line, without the admin token.
func FuzzLoad(f *testing.F) {
	f.Add(config.Example(), uint8(0), uint8(1), "5s")
	f.Add("propagation:\n  min: banana\n", uint8(0), uint8(2), "-1s")
	f.Add("[propagation]\nmax = 9999999999\n", uint8(2), uint8(6), "9999999999h")
	f.Add(`{"checks": {"failure_threshold": -1, "x": [1, {"y": null}]}}`, uint8(3), uint8(9), "1e3")
	f.Add("grace_period: 1m\npropagation.max: 50s\n", uint8(1), uint8(3), "5 fortnights")
	f.Add("admin: {addr: [::1]:0, metrics: yes}\n", uint8(0), uint8(11), "")
	f.Add("", uint8(0), uint8(12), "tok en")
	f.Add("a: &a [*a]\n", uint8(0), uint8(0), "1m30")
	f.Add("checks:\n  success_threshold: 1.0e300\n", uint8(0), uint8(10), "99999999999999999999")
	f.Add("registry:\n  ttl: 2000-01-01\n", uint8(2), uint8(15), "0.0")
	exts := []string{".yaml", ".yml", ".toml", ".json"}
	keys := config.Keys()
	const token = "fuzz-T0KEN-marker"
	f.Fuzz(func(t *testing.T, content string, ext, key uint8, value string) {
		path := ""
		if content != "" {
			path = filepath.Join(t.TempDir(), "c"+exts[int(ext)%len(exts)])
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		k := keys[int(key)%len(keys)]
		env := []string{config.EnvVar(k) + "=" + value}
		if k != "admin.token" {
			env = append(env, "DRAINKIT_ADMIN_TOKEN="+token)
		}
		c, err := config.Load(config.Sources{File: path, Env: env})
		if err == nil {
			if verr := c.Validate(); verr != nil {
				t.Fatalf("Load returned a Config that does not validate: %v", verr)
			}
			if strings.Contains(c.String(), token) {
				t.Fatalf("String shows the token: %s", c)
			}
			return
		}
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Key == "" {
			t.Fatalf("error %T %q does not name a key", err, err)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, ce.Key+":") && !strings.HasPrefix(msg, `"`) {
			t.Fatalf("error does not start with its key %q: %q", ce.Key, msg)
		}
		if strings.ContainsAny(msg, "\n\r") {
			t.Fatalf("error is not one line: %q", msg)
		}
		if !strings.Contains(content, token) && !strings.Contains(value, token) && strings.Contains(msg, token) {
			t.Fatalf("error shows the token: %q", msg)
		}
	})
}
