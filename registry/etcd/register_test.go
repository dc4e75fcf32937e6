package etcd_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/internal/helpflags"
	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/registry/etcd"
	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
)

// TestRegisterFlagsAreEtcds: a program wiring etcd.Register lists the flags
// of etcd's settings and the shared registry ones in --help, and none of
// Consul's.
func TestRegisterFlagsAreEtcds(t *testing.T) {
	got := helpflags.Registry(t, etcd.Register("orders"))
	want := []string{"registry-address", "registry-deregister-timeout", "registry-etcd-ca-file", "registry-etcd-call-timeout",
		"registry-etcd-cert-file", "registry-etcd-dial-timeout", "registry-etcd-endpoints", "registry-etcd-keepalive-interval",
		"registry-etcd-key-file", "registry-etcd-password", "registry-etcd-prefix", "registry-etcd-ttl", "registry-etcd-username", "registry-etcd-version", "registry-meta", "registry-service"}
	if !slices.Equal(got, want) {
		t.Errorf("registry flags in --help:\n got %v\nwant %v", got, want)
	}
}

// TestRegisterOneLine: drainkit.Run with etcd.Register and nothing else
// registers the instance in a real etcd from the loaded settings (endpoints
// and the registered address, a pod IP as the downward API would give it,
// from DRAINKIT_* variables), logs through the program's logger, and the
// drain removes the key. A Consul setting given to this program fails the
// start (exit 2) naming it.
func TestRegisterOneLine(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	out := &testlog.Buffer{}
	env := []string{"DRAINKIT_REGISTRY_ETCD_ENDPOINTS=" + s.Endpoint, "DRAINKIT_REGISTRY_ADDRESS=10.1.2.3",
		"DRAINKIT_PROPAGATION_MIN=0s", "DRAINKIT_PROPAGATION_QUIET=0s", "DRAINKIT_PROPAGATION_MAX=0s"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ports := make(chan int, 1)
	code := make(chan int, 1)
	go func() {
		code <- drainkit.Run(ctx, []string{"--http-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0"},
			drainkit.WithHTTP("http", ":0", http.NotFoundHandler()), drainkit.WithEnv(env), drainkit.WithOutput(out),
			drainkit.OnStarted(func(a map[string]net.Addr) { ports <- a["http"].(*net.TCPAddr).Port }),
			etcd.Register("oneline"))
	}()
	var port int
	select {
	case port = <-ports:
	case c := <-code:
		t.Fatalf("exit %d before the start:\n%s", c, out.String())
	case <-time.After(15 * time.Second):
		t.Fatalf("no start:\n%s", out.String())
	}
	key := onlyKey(t, c, "oneline", 10*time.Second)
	v, _, _, err := getKey(t, c, key)
	if err != nil {
		t.Fatal(err)
	}
	if want := "http://10.1.2.3:" + itoa(port); !slices.Equal(v.Endpoints, []string{want}) {
		t.Errorf("endpoints %v, want [%s]", v.Endpoints, want)
	}
	// Without registry.etcd.version, the program's version: never "",
	// which kratos's version filters match nothing with (issue 33).
	if want := drainkit.ProgramVersion(); v.Version != want || v.Version == "" {
		t.Errorf("version %q, want the program's %q", v.Version, want)
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Fatalf("exit %d:\n%s", c, out.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no exit 20s after the drain")
	}
	if keys, err := instanceKeys(c, "oneline"); err != nil || len(keys) != 0 {
		t.Errorf("after the drain: keys %v, %v", keys, err)
	}
	if !strings.Contains(out.String(), `"msg":"started"`) || !strings.Contains(out.String(), `"registries":"etcd"`) ||
		!strings.Contains(out.String(), `"msg":"etcd: registered"`) {
		t.Errorf("the start line or the registrar's JSON line is missing:\n%s", out.String())
	}

	var bad bytes.Buffer
	rc := drainkit.Run(context.Background(), nil, drainkit.WithHTTP("http", ":0", http.NotFoundHandler()),
		drainkit.WithEnv(append(env, "DRAINKIT_REGISTRY_TTL=20s")), drainkit.WithOutput(&bad), etcd.Register("oneline"))
	if rc != 2 || !strings.Contains(bad.String(), "registry.ttl (from env DRAINKIT_REGISTRY_TTL) is set, but no registrar this program wires (etcd) reads it") {
		t.Errorf("a Consul setting with etcd wired: exit %d, %q", rc, bad.String())
	}
}

// TestRegisterVersion: registry.etcd.version, from a flag or the
// environment, is the version in the instance's value in a real etcd.
func TestRegisterVersion(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	for _, tc := range []struct {
		name      string
		args, env []string
		want      string
	}{
		{name: "flag", args: []string{"--registry-etcd-version", "v2.1.0"}, want: "v2.1.0"},
		{name: "env", env: []string{"DRAINKIT_REGISTRY_ETCD_VERSION=v3.0.0-rc.1"}, want: "v3.0.0-rc.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			service := "version-" + tc.name
			out := &testlog.Buffer{}
			env := append([]string{"DRAINKIT_REGISTRY_ETCD_ENDPOINTS=" + s.Endpoint,
				"DRAINKIT_PROPAGATION_MIN=0s", "DRAINKIT_PROPAGATION_QUIET=0s", "DRAINKIT_PROPAGATION_MAX=0s"}, tc.env...)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			code := make(chan int, 1)
			go func() {
				code <- drainkit.Run(ctx, append([]string{"--http-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0"}, tc.args...),
					drainkit.WithHTTP("http", ":0", http.NotFoundHandler()), drainkit.WithEnv(env), drainkit.WithOutput(out),
					etcd.Register(service))
			}()
			v, _, _, err := getKey(t, c, onlyKey(t, c, service, 15*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			if v.Version != tc.want {
				t.Errorf("version %q, want %q", v.Version, tc.want)
			}
			cancel()
			select {
			case rc := <-code:
				if rc != 0 {
					t.Fatalf("exit %d:\n%s", rc, out.String())
				}
			case <-time.After(20 * time.Second):
				t.Fatal("no exit 20s after the drain")
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
