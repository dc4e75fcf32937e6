package consul_test

// Tests of the public API from outside the package.

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/consul"
	"github.com/drainkit/drainkit/registry/consul/consultest"
	"github.com/hashicorp/consul/api"
)

// options returns registrar options against a with TTL 3s, heartbeat 1s and
// the given address, logging into the returned buffer.
func options(t *testing.T, a *consultest.Agent, service, address string, port int) (consul.Options, *testlog.Buffer) {
	log, buf := testlog.New(t, "registrar log")
	o := consul.DefaultOptions(service, port)
	o.Address = address
	o.TTL, o.HeartbeatInterval = 3*time.Second, time.Second
	o.Consul = a.Config()
	o.Logger = log
	return o, buf
}

func newRegistrar(t *testing.T, o consul.Options) *consul.Registrar {
	t.Helper()
	r, err := consul.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func ready(at time.Time) lifecycle.Transition {
	return lifecycle.Transition{To: lifecycle.Ready, Cause: lifecycle.CauseWarmup, At: at}
}

// TestSettingsFailAtNew (issue 9 item 4): a CONSUL_CACERT naming a missing
// file and a CONSUL_HTTP_ADDR that is no address fail at New (and
// Options.Validate), before anything could listen, naming the variable, its
// value and the problem; the same values set in Options.Consul name the
// field.
func TestSettingsFailAtNew(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing-ca.pem")
	for _, c := range []struct {
		name, env, value, want string
	}{
		{"cacert", api.HTTPCAFile, missing, "cannot read the CA certificate file"},
		{"addr", api.HTTPAddrEnvName, "::::garbage", "not an address"},
		{"scheme", api.HTTPAddrEnvName, "ftp://127.0.0.1:8500", "unknown scheme"},
		{"token file", api.HTTPTokenFileEnvName, missing, "cannot read the ACL token file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv(c.env, c.value)
			o := consul.DefaultOptions("svc", 8080)
			_, err := consul.New(o)
			var se *consul.SettingError
			if !errors.As(err, &se) || se.Setting != c.env || !se.FromEnv || se.Value != c.value {
				t.Fatalf("New = %v (%#v); want a SettingError for %s", err, se, c.env)
			}
			for _, s := range []string{"environment variable", c.env, c.value, c.want} {
				if !strings.Contains(err.Error(), s) {
					t.Fatalf("error %q does not say %q", err, s)
				}
			}
			if verr := o.Validate(); verr == nil || verr.Error() != err.Error() {
				t.Fatalf("Validate = %v; want the same error as New", verr)
			}
			t.Log(err)
		})
	}
	t.Run("options field", func(t *testing.T) {
		o := consul.DefaultOptions("svc", 8080)
		o.Consul = &api.Config{Address: "::::garbage"}
		_, err := consul.New(o)
		var se *consul.SettingError
		if !errors.As(err, &se) || se.Setting != "Options.Consul.Address" || se.FromEnv {
			t.Fatalf("New = %v; want a SettingError naming Options.Consul.Address", err)
		}
	})
	t.Run("good values", func(t *testing.T) {
		for _, addr := range []string{"127.0.0.1:8500", "localhost:8500", "[::1]:8500", "http://consul:8500", "https://consul.example:8501/prefix", "unix:///run/consul.sock", "consul"} {
			t.Setenv(api.HTTPAddrEnvName, addr)
			if _, err := consul.New(consul.DefaultOptions("svc", 8080)); err != nil {
				t.Errorf("CONSUL_HTTP_ADDR=%s: %v", addr, err)
			}
		}
	})
}

// TestSourceDeliversRegistryViews (issue 11): the Source of a service
// delivers registry.View with Source "consul", the X-Consul-Index as
// Revision, and the instance's READY time (registry.MetaReadyAt) as the
// registrar published it on its first READY; after an eject and a restore,
// the agent holds the restore's READY time (the latest READY).
func TestSourceDeliversRegistryViews(t *testing.T) {
	a := consultest.Start(t)
	o, _ := options(t, a, "src", "127.0.0.1", 18121)
	r := newRegistrar(t, o)
	readyAt := time.Now().Add(-time.Second).Round(0)
	if err := r.Sync(context.Background(), ready(readyAt)); err != nil {
		t.Fatal(err)
	}
	var src registry.Source = consul.NewSource(a.Client(t), o.Service, consul.WatchOptions{WaitTime: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got registry.View
	err := src.Watch(ctx, func(v registry.View) {
		if v.Has(r.ID()) {
			got = v
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Watch = %v (last view %+v)", err, got)
	}
	if got.Source != consul.SourceName || got.Service != o.Service || got.Revision == 0 || got.Received.IsZero() || got.Err != nil {
		t.Fatalf("view %+v", got)
	}
	in := got.Instances[0]
	at, ok := in.ReadyAt()
	if !ok || !at.Equal(readyAt) || in.HostPort() != "127.0.0.1:18121" {
		t.Fatalf("instance %+v: ReadyAt %v %t, want %v", in, at, ok, readyAt)
	}
	if _, err := time.Parse(time.RFC3339Nano, in.Meta[registry.MetaReadyAt]); err != nil || !strings.HasSuffix(in.Meta[registry.MetaReadyAt], "Z") {
		t.Fatalf("meta %s=%q is not RFC 3339 UTC", registry.MetaReadyAt, in.Meta[registry.MetaReadyAt])
	}
	// The READY time is the latest READY's: the restore's, not the first's
	// (registry.MetaReadyAt's rule; before, it stayed the first READY's).
	if err := r.Sync(context.Background(), lifecycle.Transition{To: lifecycle.Ejected, Cause: lifecycle.CauseOperator}); err != nil {
		t.Fatal(err)
	}
	restored := time.Now()
	if err := r.Sync(context.Background(), ready(restored)); err != nil {
		t.Fatal(err)
	}
	svc, _, err := a.Client(t).Agent().Service(r.ID(), nil)
	if want := restored.UTC().Format(time.RFC3339Nano); err != nil || svc.Meta[registry.MetaReadyAt] != want {
		t.Fatalf("after eject and restore: meta %v, %v; want %s=%s (the restore's READY time, not %s)",
			svc.Meta, err, registry.MetaReadyAt, want, in.Meta[registry.MetaReadyAt])
	}
}

// TestSharedNodeAddressKeepsLiveInstance (issue 9 item 2): two live
// registrars on one agent with an empty address (Consul substitutes the
// node's address, as for pods behind a per-node agent) and the same port:
// the second does not remove the first as a dead predecessor, and the first
// never has to register again. Nor is a predecessor on an explicit address
// that is not this host's removed.
func TestSharedNodeAddressKeepsLiveInstance(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	const port = 18122
	o1, buf1 := options(t, a, "shared", "", port)
	o2, buf2 := options(t, a, "shared", "", port)
	r1, r2 := newRegistrar(t, o1), newRegistrar(t, o2)
	ctx := context.Background()
	if err := r1.Sync(ctx, ready(time.Now())); err != nil {
		t.Fatal(err)
	}
	if err := r2.Sync(ctx, ready(time.Now())); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2500 * time.Millisecond) // two heartbeats: a removed r1 would have registered again
	entries, _, err := c.Health().Service("shared", "", true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("%d passing instances, want both live ones", len(entries))
	}
	if n := r1.Status().Registrations; n != 1 {
		t.Fatalf("the first instance registered %d times: it was removed as a predecessor", n)
	}
	for _, b := range []*testlog.Buffer{buf1, buf2} {
		if strings.Contains(b.String(), "removed a dead predecessor") {
			t.Fatalf("a live instance was removed:\n%s", b.String())
		}
	}
	if !strings.Contains(buf2.String(), "cannot prove") {
		t.Fatalf("no log line says why predecessors were kept:\n%s", buf2.String())
	}

	// An explicit address of another host (TEST-NET-1) proves nothing either.
	const foreign = "192.0.2.10"
	if err := c.Agent().ServiceRegister(&api.AgentServiceRegistration{ID: "foreign-old", Name: "foreign", Address: foreign, Port: port,
		Meta: map[string]string{"drainkit_managed": "true"}}); err != nil {
		t.Fatal(err)
	}
	o3, _ := options(t, a, "foreign", foreign, port)
	if err := newRegistrar(t, o3).Sync(ctx, ready(time.Now())); err != nil {
		t.Fatal(err)
	}
	if svc, _, err := c.Agent().Service("foreign-old", nil); err != nil || svc == nil {
		t.Fatalf("a registration on another host's address was removed: %v", err)
	}
}
