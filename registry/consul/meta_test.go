package consul_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/internal/consultest"
	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/consul"
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var got registry.Instance
	err = consul.NewSource(a.Client(t), "zoned", consul.WatchOptions{WaitTime: time.Second}).Watch(ctx, func(v registry.View) {
		for _, in := range v.Instances {
			if in.ID == r.ID() {
				got = in
				cancel()
			}
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Watch = %v; the instance was never listed", err)
	}
	if _, ok := got.ReadyAt(); got.Meta["zone"] != "b" || got.Meta["track"] != "canary" || !ok {
		t.Fatalf("instance meta %v: want zone=b, track=canary and drainkit's %s", got.Meta, registry.MetaReadyAt)
	}
	if cfg.Registry.Meta["drainkit_managed"] != "" {
		t.Fatalf("the registrar wrote into the settings' map: %v", cfg.Registry.Meta)
	}
}
