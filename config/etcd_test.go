package config_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/config"
)

// TestEtcdKeys: registry.etcd.* keys load from the environment and a file,
// default as documented, and out-of-range values fail naming the key.
func TestEtcdKeys(t *testing.T) {
	d := config.Default().Registry.Etcd
	if d.Prefix != "/microservices" || d.TTL != 10*time.Second || d.DialTimeout != 5*time.Second || d.Endpoints != "" {
		t.Fatalf("defaults: %+v", d)
	}
	c, err := config.Load(config.Sources{Env: []string{
		"DRAINKIT_REGISTRY_ETCD_ENDPOINTS= 127.0.0.1:2379, ,https://etcd-1:2379",
		"DRAINKIT_REGISTRY_ETCD_TTL=6s", "DRAINKIT_REGISTRY_ETCD_PASSWORD=hunter2",
	}})
	if err != nil {
		t.Fatal(err)
	}
	e := c.Registry.Etcd
	if got := e.EndpointList(); !slices.Equal(got, []string{"127.0.0.1:2379", "https://etcd-1:2379"}) || e.TTL != 6*time.Second {
		t.Fatalf("loaded %+v, endpoints %q", e, got)
	}
	if s := c.String(); strings.Contains(s, "hunter2") || !strings.Contains(s, "registry.etcd.password=[set]") {
		t.Fatalf("String leaks or omits the password: %s", s)
	}
	path := writeFile(t, "c.yaml", "registry:\n  etcd:\n    prefix: /svc\n    keepalive_interval: 1s\n")
	c, err = config.Load(config.Sources{Env: []string{}, File: path})
	if err != nil || c.Registry.Etcd.Prefix != "/svc" || c.Registry.Etcd.KeepAliveInterval != time.Second {
		t.Fatalf("file: %v %+v", err, c)
	}
	for _, tc := range []struct{ env, key string }{
		{"DRAINKIT_REGISTRY_ETCD_TTL=1s", "registry.etcd.ttl"},
		{"DRAINKIT_REGISTRY_ETCD_TTL=2500ms", "registry.etcd.ttl"},
		{"DRAINKIT_REGISTRY_ETCD_KEEPALIVE_INTERVAL=5s", "registry.etcd.keepalive_interval"},
		{"DRAINKIT_REGISTRY_ETCD_PREFIX=microservices/", "registry.etcd.prefix"},
		{"DRAINKIT_REGISTRY_ETCD_CERT_FILE=/c.pem", "registry.etcd.key_file"},
	} {
		_, err := config.Load(config.Sources{Env: []string{tc.env}})
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Key != tc.key {
			t.Errorf("%s: error %v, want one naming %s", tc.env, err, tc.key)
		}
	}
}
