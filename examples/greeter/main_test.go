package main

// Tests of issue 22: the example runs as a real child process, configured
// through its viper instance (file, GREETER_* variables, flags).

import (
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/drainkit/drainkit/internal/childtest"
)

// greeter is this example, built once for all the tests.
var greeter = childtest.NewOnce("github.com/drainkit/drainkit/examples/greeter")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.Cleanup(greeter.RemoveAndExit)) }

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestViperPrecedence: drainkit's keys come from the application's file
// (under drainkit:), its GREETER_* variables and its flags, in viper's
// order, next to the application's own keys; the service serves, and drains
// on SIGTERM.
func TestViperPrecedence(t *testing.T) {
	file := writeFile(t, "greeter.yaml", "greeting: from the file\n"+
		"drainkit:\n  propagation: {min: 0s, quiet: 0s, max: 0s}\n  drain:\n    timeout: 2s\n  grace_period: 10s\n")
	c := childtest.Start(t, greeter.Path(t), []string{"GREETER_GREETING=hi", "GREETER_DRAINKIT_DRAIN_TIMEOUT=3s"},
		"--config", file, "--stop-timeout=1s")
	started := c.LogLines("started")
	if len(started) != 1 {
		t.Fatalf("started lines: %v", started)
	}
	settings, _ := started[0]["settings"].(map[string]any)
	for key, want := range map[string]string{
		"drain.timeout":   "3s",  // env over file
		"stop.timeout":    "1s",  // flag
		"grace_period":    "10s", // file
		"propagation.max": "0s",  // file
		"checks.interval": "5s",  // drainkit's default
	} {
		if got := settings[key]; got != want {
			t.Errorf("%s = %v, want %s", key, got, want)
		}
	}
	resp, err := c.Client.Get("http://" + c.HTTP + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.TrimSpace(string(body)) != "hi" {
		t.Errorf("GET / = %q, want the greeting from GREETER_GREETING", body)
	}
	if c.State() != "READY" {
		t.Errorf("state %q, want READY", c.State())
	}
	c.Signal(syscall.SIGTERM)
	if code := c.WaitExit(15 * time.Second); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
}

// TestBadSettingFailsBeforeListening: a bad drainkit value anywhere in the
// application's configuration exits 2 with one line naming the key, the
// value and its source, before any listener opens: both addresses are held
// by the test, so opening either would report "address already in use"
// instead, and no "started" line appears.
func TestBadSettingFailsBeforeListening(t *testing.T) {
	var held [2]net.Listener
	for i := range held {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		held[i] = ln
	}
	badAddr := writeFile(t, "addr.yaml", "drainkit:\n  admin:\n    addr: nope\n")
	twice := writeFile(t, "twice.toml", "[drainkit]\ngrace_period = \"30s\"\n[Drainkit]\ngrace_period = \"40s\"\n")
	unknown := writeFile(t, "unknown.json", `{"greeting": "hi", "drainkit": {"propagation": {"mni": "1s"}}}`)
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{[]string{"GREETER_DRAINKIT_PROPAGATION_MIN=banana"}, nil,
			`propagation.min: "banana" from env GREETER_DRAINKIT_PROPAGATION_MIN is not a duration (want e.g. 5s; range >= 0s, <= propagation.max)`},
		{nil, []string{"--grace-period=5s"},
			`grace_period: "5s" from flag --grace-period is out of range (must be >= 24s`},
		{nil, []string{"--config", badAddr}, // the flag --admin-addr overrides it: still checked
			`admin.addr: "nope" from file ` + badAddr + ` at drainkit.admin.addr is not valid (must be host:port`},
		{nil, []string{"--config", twice},
			`config: "` + twice + `" from viper sets drainkit.grace_period twice, as "Drainkit: {grace_period}" and as "drainkit: {grace_period}"`},
		{[]string{"GREETER_CONFIG=" + unknown}, nil,
			`drainkit.propagation.mni: from file ` + unknown + ` is not a known key (did you mean drainkit.propagation.min?)`},
	} {
		args := append([]string{"--admin-addr", held[0].Addr().String(), "--http-addr", held[1].Addr().String()}, tc.args...)
		c := childtest.StartNoWait(t, greeter.Path(t), tc.env, args...)
		code := c.WaitExit(10 * time.Second)
		out := strings.TrimSpace(c.Logs())
		if code != 2 || !strings.Contains(out, tc.want) || strings.Contains(out, "\n") {
			t.Errorf("env %v args %v: exit %d, stderr %q\nwant 2 and one line containing %s", tc.env, tc.args, code, out, tc.want)
		}
		if strings.Contains(out, "address already in use") || strings.Contains(out, `"started"`) {
			t.Errorf("env %v args %v: a listener was opened before the settings were checked: %s", tc.env, tc.args, out)
		}
	}
}

// TestHelpNamesTheApplicationsVariables: --help names GREETER_DRAINKIT_*,
// the variables this program reads, not drainkit's own DRAINKIT_*.
func TestHelpNamesTheApplicationsVariables(t *testing.T) {
	var out strings.Builder
	if code := run([]string{"--help"}, &out); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	help := out.String()
	if !strings.Contains(help, "(env GREETER_DRAINKIT_PROPAGATION_MIN;") || strings.Contains(help, "env DRAINKIT_") {
		t.Errorf("help:\n%s", help)
	}
}
