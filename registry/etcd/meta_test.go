package etcd_test

import (
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/internal/sourcetest"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/etcd"
	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
)

// TestMetaFromSettings: registry.meta from the environment is registered as
// kratos's instance metadata beside the READY time, and the Source
// delivers it in registry.Instance.Meta, where consumer.Zones reads the
// zone.
func TestMetaFromSettings(t *testing.T) {
	s := etcdtest.Start(t)
	cfg, err := config.Load(config.Sources{Env: []string{"DRAINKIT_REGISTRY_META=zone=b,track=canary",
		"DRAINKIT_REGISTRY_ADDRESS=127.0.0.1", "DRAINKIT_REGISTRY_ETCD_ENDPOINTS=" + strings.Join(s.Config().Endpoints, ",")}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := etcd.OptionsFrom(cfg.Registry, "zoned", 18132)
	if err != nil {
		t.Fatal(err)
	}
	o.TTL, o.KeepAliveInterval = testTTL, testKeepAlive
	o.Logger, _ = testLogger(t)
	r := newRegistrar(t, o)
	if err := syncTo(t, r, lifecycle.Ready, lifecycle.CauseWarmup); err != nil {
		t.Fatal(err)
	}
	got := sourcetest.Listed(t, etcd.NewSource(s.Client(t), "zoned", etcd.WatchOptions{}), "127.0.0.1:18132", 10*time.Second)
	if _, ok := got.ReadyAt(); got.Meta["zone"] != "b" || got.Meta["track"] != "canary" || !ok {
		t.Fatalf("instance meta %v: want zone=b, track=canary and drainkit's %s", got.Meta, registry.MetaReadyAt)
	}
}
