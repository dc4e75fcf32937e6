package main

import (
	"net"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A bad timing fails at start, before any listener opens, with one line
// naming the key; exit code 2.
func TestBadSettingsFailAtStart(t *testing.T) {
	// Hold the admin port: if the child tried to listen first, it would
	// report the port in use instead of the bad key.
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	for _, tc := range []struct {
		env  []string
		args []string
		want string
	}{
		{[]string{"DRAINKIT_PROPAGATION_MIN=banana"}, nil, "propagation.min"},
		{[]string{"DRAINKIT_PROPAGATION_MIN=20s"}, nil, "propagation.min"}, // > max 12s
		{[]string{"DRAINKIT_GRACE_PERIOD=5s"}, nil, "grace_period"},
		{[]string{"DRAINKIT_CHECKS_FAILURE_THRESHOLD=0"}, nil, "checks.failure_threshold"},
		{nil, []string{"--warmup", "-1s"}, "--warmup"},
		{nil, []string{"--nope"}, "unknown flag: --nope"},
	} {
		c := startChildNoWait(t, tc.env, append([]string{"--admin-addr", held.Addr().String()}, tc.args...)...)
		code := c.WaitExit(10 * time.Second)
		out := strings.TrimSpace(c.Logs())
		if code != 2 || !strings.Contains(out, tc.want) || strings.Contains(out, "\n") {
			t.Errorf("env %v args %v: exit %d, stderr %q; want 2 and one line naming %s", tc.env, tc.args, code, out, tc.want)
		}
		if strings.Contains(out, "address already in use") {
			t.Errorf("env %v: a listener was opened before the settings were checked", tc.env)
		}
	}
}

// TestBadConsulSettingsFailAtStart (issue 9 item 4): with CONSUL_HTTP_ADDR
// set and CONSUL_CACERT naming a missing file, the example exits 2 with one
// line naming CONSUL_CACERT, before any listener opens: both addresses are
// held by the test, so opening either would report "address already in use"
// instead, and no "started" line appears.
func TestBadConsulSettingsFailAtStart(t *testing.T) {
	held := holdPorts(t)
	for _, env := range [][]string{
		{"CONSUL_HTTP_ADDR=127.0.0.1:8500", "CONSUL_CACERT=/nonexistent"},
		{"CONSUL_HTTP_ADDR=https://127.0.0.1:8500", "CONSUL_CACERT=/nonexistent"},
	} {
		c := startChildNoWait(t, env, "--admin-addr", held[0].Addr().String(), "--http-addr", held[1].Addr().String())
		code := c.WaitExit(10 * time.Second)
		out := strings.TrimSpace(c.Logs())
		if code != 2 || !strings.Contains(out, "CONSUL_CACERT") || strings.Contains(out, "\n") {
			t.Errorf("env %v: exit %d, stderr %q; want 2 and one line naming CONSUL_CACERT", env, code, out)
		}
		if strings.Contains(out, "address already in use") || strings.Contains(out, `"started"`) {
			t.Errorf("env %v: a listener was opened before the Consul settings were checked: %s", env, out)
		}
	}
}

// TestBadDeregistrationBudgetFailsAtStart (issue 18 item 4): with no
// propagation window and a registrar configured, a
// registry.deregister_timeout that cannot fit grace_period (30s against
// 25s; at most 25s - 500ms - drain.timeout 6s - stop.timeout 3s - margin
// 2.5s = 13s fits) fails at start like every other setting: exit 2, one line naming the
// key, its source and the allowed range, before any listener opens (both
// addresses are held by the test). The same settings with no registrar
// configured start: the budget is spent only by a registrar.
func TestBadDeregistrationBudgetFailsAtStart(t *testing.T) {
	held := holdPorts(t)
	budget := append([]string{"DRAINKIT_REGISTRY_DEREGISTER_TIMEOUT=30s", "DRAINKIT_GRACE_PERIOD=25s"}, noWindow...)
	for _, registrar := range []string{"CONSUL_HTTP_ADDR=127.0.0.1:1", "ETCD_ENDPOINTS=127.0.0.1:1"} {
		env := append([]string{registrar}, budget...)
		c := startChildNoWait(t, env, "--admin-addr", held[0].Addr().String(), "--http-addr", held[1].Addr().String())
		code := c.WaitExit(10 * time.Second)
		out := strings.TrimSpace(c.Logs())
		if code != 2 || strings.Contains(out, "\n") || !strings.Contains(out, "registry.deregister_timeout") ||
			!strings.Contains(out, "DRAINKIT_REGISTRY_DEREGISTER_TIMEOUT") || !strings.Contains(out, "<= 13s") {
			t.Errorf("%s: exit %d, stderr %q; want 2 and one line naming registry.deregister_timeout, its source and the range (<= 13s)", registrar, code, out)
		}
		if strings.Contains(out, "address already in use") || strings.Contains(out, `"started"`) {
			t.Errorf("%s: a listener was opened before the budget was checked: %s", registrar, out)
		}
	}
	c := startChild(t, budget, "--admin-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0")
	c.Signal(syscall.SIGTERM)
	if code := c.WaitExit(10 * time.Second); code != 0 {
		t.Errorf("no registrar: exit %d, want 0; log:\n%s", code, c.Logs())
	}
}

// TestBadRegistryMetaFailsAtStart: with a registrar configured, a
// registry.meta that sets a key drainkit writes itself, or a key Consul
// refuses, fails at start: exit 2, one line naming the key, its source and
// the rule, before any listener opens (both addresses are held by the
// test).
func TestBadRegistryMetaFailsAtStart(t *testing.T) {
	held := holdPorts(t)
	for _, tc := range []struct{ env, want string }{
		{"DRAINKIT_REGISTRY_META=zone=a,drainkit_ready_at=x", `meta key "drainkit_ready_at" is reserved`},
		{"DRAINKIT_REGISTRY_META=Zone=a", `meta key "Zone" must be 1 to 128 lower-case letters`},
	} {
		for _, registrar := range []string{"CONSUL_HTTP_ADDR=127.0.0.1:1", "ETCD_ENDPOINTS=127.0.0.1:1"} {
			c := startChildNoWait(t, []string{registrar, tc.env}, "--admin-addr", held[0].Addr().String(), "--http-addr", held[1].Addr().String())
			code := c.WaitExit(10 * time.Second)
			out := strings.TrimSpace(c.Logs())
			if code != 2 || strings.Contains(out, "\n") || !strings.Contains(out, "registry.meta") ||
				!strings.Contains(out, "from env DRAINKIT_REGISTRY_META") || !strings.Contains(out, tc.want) {
				t.Errorf("%s %s: exit %d, stderr %q; want 2 and one line naming registry.meta, its source and %q", registrar, tc.env, code, out, tc.want)
			}
			if strings.Contains(out, "address already in use") || strings.Contains(out, `"started"`) {
				t.Errorf("%s %s: a listener was opened before the settings were checked: %s", registrar, tc.env, out)
			}
		}
	}
}

// holdPorts listens on two 127.0.0.1 ports until the test ends: a child
// given them as its addresses reports "address already in use" if it tries
// to listen.
func holdPorts(t *testing.T) [2]net.Listener {
	var held [2]net.Listener
	for i := range held {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		held[i] = ln
	}
	return held
}
