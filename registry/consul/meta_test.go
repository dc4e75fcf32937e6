package consul_test

import (
	"context"
	"testing"
	"time"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/internal/sourcetest"
	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/consul"
	"github.com/drainkit/drainkit/registry/consul/consultest"
)

// TestMetaFromSettings: registry.meta from the environment is registered
// with the instance beside drainkit's own keys, and the Source delivers it
// in registry.Instance.Meta, where consumer.Zones reads the zone.
func TestMetaFromSettings(t *testing.T) {
	a := consultest.Start(t)
	cfg, err := config.Load(config.Sources{Env: []string{"DRAINKIT_REGISTRY_META=zone=b,track=canary",
		"DRAINKIT_REGISTRY_ADDRESS=127.0.0.1", "DRAINKIT_REGISTRY_TTL=3s"}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := consul.OptionsFrom(cfg.Registry, "zoned", 18131)
	if err != nil {
		t.Fatal(err)
	}
	o.Consul = a.Config()
	o.Logger, _ = testlog.New(t, "registrar log")
	r := newRegistrar(t, o)
	if err := r.Sync(context.Background(), ready(time.Now())); err != nil {
		t.Fatal(err)
	}
	got := sourcetest.Listed(t, consul.NewSource(a.Client(t), "zoned", consul.WatchOptions{WaitTime: time.Second}), "127.0.0.1:18131", 10*time.Second)
	if _, ok := got.ReadyAt(); got.Meta["zone"] != "b" || got.Meta["track"] != "canary" || !ok {
		t.Fatalf("instance meta %v: want zone=b, track=canary and drainkit's %s", got.Meta, registry.MetaReadyAt)
	}
	if cfg.Registry.Meta["drainkit_managed"] != "" {
		t.Fatalf("the registrar wrote into the settings' map: %v", cfg.Registry.Meta)
	}
}
