package main

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/childtest"
	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
)

// Two httpservice replicas register in etcd (ETCD_ENDPOINTS: kratos's
// layout under /microservices, each key under a lease); the consumer started
// with --etcd discovers both and every call through it succeeds. One replica
// drains: revoking its lease deletes its key, the consumer drops it while it
// still serves, and no call fails.
func TestEtcdDiscovery(t *testing.T) {
	srv := etcdtest.Start(t)
	env := append(srv.Env(), "DRAINKIT_PROPAGATION_MIN=2s")
	svc := []string{"--service", "orders"}
	r1 := childtest.Start(t, serviceBin, env, svc...)
	r2 := childtest.Start(t, serviceBin, env, svc...)
	c := childtest.Start(t, consumerBin, nil, append(svc, "--etcd", srv.Endpoint)...)
	waitFor(t, 20*time.Second, "the consumer lists r1 and r2", func() bool {
		s := readStatus(t, c)
		return s.lists(r1.HTTP) && s.lists(r2.HTTP)
	})
	if s := readStatus(t, c); s.Source != "etcd" || s.Instances != 2 || s.Revision == 0 {
		t.Errorf("status %+v: want source etcd, 2 instances and etcd's revision", s)
	}
	stopLoad := load(t, c)

	r1.Signal(syscall.SIGTERM)
	waitFor(t, 20*time.Second, "the consumer drops r1", func() bool { return !readStatus(t, c).lists(r1.HTTP) })
	select {
	case <-r1.Exited():
		t.Errorf("r1 exited before the consumer dropped it")
	default:
	}
	if code := r1.WaitExit(30 * time.Second); code != 0 {
		t.Errorf("r1 exit code %d", code)
	}
	base := readStatus(t, c).Requests
	waitFor(t, 10*time.Second, "30 requests after r1 exited", func() bool {
		s := readStatus(t, c)
		return s.Requests >= base+30 && !s.lists(r1.HTTP)
	})
	if sent, failed := stopLoad(); failed != 0 || sent < 30 {
		t.Errorf("%d of %d requests failed, want 0 of at least 30", failed, sent)
	}
	c.Signal(syscall.SIGTERM)
	if code := c.WaitExit(10 * time.Second); code != 0 {
		t.Errorf("consumer exit code %d after SIGTERM, want 0", code)
	}
}

// Two discoveries at once, or a bad --etcd value, exits 2 before
// listening, with a message naming the flags (and CONSUL_HTTP_ADDR).
func TestDiscoveryFlagErrorsExit2(t *testing.T) {
	for _, tc := range []struct {
		env, args []string
		want      string
	}{
		{nil, []string{"--etcd", "127.0.0.1:1", "--targets", "127.0.0.1:2"}, "--etcd and --targets"},
		{[]string{"CONSUL_HTTP_ADDR=127.0.0.1:1"}, []string{"--etcd", "127.0.0.1:1"}, "--etcd and CONSUL_HTTP_ADDR"},
		{[]string{"CONSUL_HTTP_ADDR=127.0.0.1:1"}, []string{"--targets", "127.0.0.1:2"}, "--targets and CONSUL_HTTP_ADDR"},
		{nil, []string{"--targets", "127.0.0.1:2", "--etcd-prefix", "/x"}, "--etcd-prefix: only with --etcd"},
		{nil, []string{"--etcd", "127.0.0.1:1", "--etcd-prefix", "/x/"}, `--etcd-prefix "/x/": must start with '/'`},
		{nil, []string{"--etcd", "127.0.0.1:1", "--etcd-prefix", ""}, "--etcd-prefix: empty; omit it for the default /microservices"},
		{nil, []string{"--etcd", ","}, `--etcd "": must list at least one`},
	} {
		c := childtest.StartNoWait(t, consumerBin, tc.env, tc.args...)
		if code := c.WaitExit(10 * time.Second); code != 2 || !strings.Contains(c.Logs(), tc.want) {
			t.Errorf("%v %v: exit %d, logs %q; want 2 and %q", tc.env, tc.args, code, c.Logs(), tc.want)
		}
	}
}

// A service registered under one prefix and a consumer reading another: the
// consumer starts and finds no instance, and its start line and the
// "forward failed" line name the keys it reads, so that the mismatch with
// the service's "etcd: registered" key shows.
func TestEtcdWrongPrefixNamesTheKeysRead(t *testing.T) {
	srv := etcdtest.Start(t)
	r := childtest.Start(t, serviceBin, append(srv.Env(), "DRAINKIT_REGISTRY_ETCD_PREFIX=/services"), "--service", "orders")
	c := childtest.Start(t, consumerBin, nil, "--service", "orders", "--etcd", srv.Endpoint, "--etcd-prefix", "/service")
	from := `"from":"etcd keys /service/orders/ at ` + srv.Endpoint + `"`
	if !strings.Contains(c.Logs(), `"msg":"started"`) || !strings.Contains(c.Logs(), from) {
		t.Errorf("consumer logs %q: want a start line with %s", c.Logs(), from)
	}
	waitFor(t, 20*time.Second, "the service's registration", func() bool {
		return strings.Contains(r.Logs(), `"key":"/services/orders/`)
	})
	if code, body := get(t, c, "/"); code != http.StatusBadGateway || !strings.Contains(body, "no instance") {
		t.Errorf("GET /: %d %q, want 502 and no instance", code, body)
	}
	waitFor(t, 10*time.Second, "a forward failed line naming the keys", func() bool {
		for _, l := range strings.Split(c.Logs(), "\n") {
			if strings.Contains(l, `"msg":"forward failed"`) && strings.Contains(l, from) {
				return true
			}
		}
		return false
	})
	c.Signal(syscall.SIGTERM)
	if code := c.WaitExit(10 * time.Second); code != 0 {
		t.Errorf("consumer exit code %d after SIGTERM, want 0", code)
	}
}
