package config_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/config"
	"github.com/spf13/pflag"
)

// TestNacosKeys: registry.nacos.* keys load from the environment, a file
// and flags, default as documented, and out-of-range values fail naming
// the key, its source and the allowed range.
func TestNacosKeys(t *testing.T) {
	d := config.Default().Registry.Nacos
	if d.ServerAddr != "" || d.ContextPath != "/nacos" || d.Group != "DEFAULT_GROUP" || d.Cluster != "DEFAULT" ||
		d.Weight != 1 || d.SyncInterval != 2*time.Second || d.CloseTimeout != 2*time.Second {
		t.Fatalf("defaults: %+v", d)
	}
	c, err := config.Load(config.Sources{Env: []string{
		"DRAINKIT_REGISTRY_NACOS_SERVER_ADDR= 127.0.0.1:8848, ,10.0.0.2:8848,[::1]:8848",
		"DRAINKIT_REGISTRY_NACOS_WEIGHT=2.5", "DRAINKIT_REGISTRY_NACOS_USERNAME=nacos",
		"DRAINKIT_REGISTRY_NACOS_PASSWORD=hunter2", "DRAINKIT_REGISTRY_NACOS_NAMESPACE=dev-1",
	}})
	if err != nil {
		t.Fatal(err)
	}
	n := c.Registry.Nacos
	if got := n.ServerAddrList(); !slices.Equal(got, []string{"127.0.0.1:8848", "10.0.0.2:8848", "[::1]:8848"}) || n.Weight != 2.5 || n.Namespace != "dev-1" {
		t.Fatalf("loaded %+v, servers %q", n, got)
	}
	if s := c.String(); strings.Contains(s, "hunter2") || !strings.Contains(s, "registry.nacos.password=[set]") {
		t.Fatalf("String leaks or omits the password: %s", s)
	}
	path := writeFile(t, "c.yaml", "registry:\n  nacos:\n    group: orders\n    weight: 30\n    sync_interval: 1s\n")
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	config.BindFlags(fs)
	if err := fs.Parse([]string{"--registry-nacos-cluster=zone-a"}); err != nil {
		t.Fatal(err)
	}
	c, err = config.Load(config.Sources{Env: []string{}, File: path, Flags: fs})
	if err != nil || c.Registry.Nacos.Group != "orders" || c.Registry.Nacos.Weight != 30 ||
		c.Registry.Nacos.SyncInterval != time.Second || c.Registry.Nacos.Cluster != "zone-a" {
		t.Fatalf("file and flag: %v %+v", err, c)
	}
	for _, tc := range []struct{ env, key string }{
		{"DRAINKIT_REGISTRY_NACOS_NAMESPACE=bad namespace!", "registry.nacos.namespace"},
		{"DRAINKIT_REGISTRY_NACOS_GROUP=a@@b", "registry.nacos.group"},
		{"DRAINKIT_REGISTRY_NACOS_SERVER_ADDR=127.0.0.1:65000", "registry.nacos.server_addr"},
		{"DRAINKIT_REGISTRY_NACOS_SERVER_ADDR=127.0.0.1", "registry.nacos.server_addr"},
		{"DRAINKIT_REGISTRY_NACOS_SERVER_ADDR=::1:8848", "registry.nacos.server_addr"},
		{"DRAINKIT_REGISTRY_NACOS_SERVER_ADDR=[fe80::1%eth0]:8848", "registry.nacos.server_addr"},
		{"DRAINKIT_REGISTRY_NACOS_CLUSTER=a_b", "registry.nacos.cluster"},
		{"DRAINKIT_REGISTRY_NACOS_WEIGHT=0", "registry.nacos.weight"},
		{"DRAINKIT_REGISTRY_NACOS_WEIGHT=10001", "registry.nacos.weight"},
		{"DRAINKIT_REGISTRY_NACOS_WEIGHT=heavy", "registry.nacos.weight"},
		{"DRAINKIT_REGISTRY_NACOS_PASSWORD=x", "registry.nacos.password"},
		{"DRAINKIT_REGISTRY_NACOS_CONTEXT_PATH=nacos", "registry.nacos.context_path"},
		{"DRAINKIT_REGISTRY_NACOS_CALL_TIMEOUT=3s", "registry.nacos.call_timeout"},
		{"DRAINKIT_REGISTRY_NACOS_SYNC_INTERVAL=10ms", "registry.nacos.sync_interval"},
	} {
		_, err := config.Load(config.Sources{Env: []string{tc.env}})
		var ce *config.Error
		if !errors.As(err, &ce) || ce.Key != tc.key || ce.Source.Kind != config.FromEnv || ce.Allowed == "" {
			t.Errorf("%s: error %v, want one naming %s, the environment and the allowed range", tc.env, err, tc.key)
		}
	}
}
