package nacos_test

import (
	"testing"
	"time"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/internal/sourcetest"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/nacos"
)

// TestMetaFromSettings: registry.meta from the environment is registered as
// the instance's metadata beside drainkit's keys, and the Source delivers
// it in registry.Instance.Meta, where consumer.Zones reads the zone.
func TestMetaFromSettings(t *testing.T) {
	const svc = "meta-svc"
	cfg, err := config.Load(config.Sources{Env: []string{"DRAINKIT_REGISTRY_META=zone=b,track=canary",
		"DRAINKIT_REGISTRY_ADDRESS=127.0.0.1", "DRAINKIT_REGISTRY_NACOS_SERVER_ADDR=" + srv.Addr}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := nacos.OptionsFrom(cfg.Registry, svc, 18133)
	if err != nil {
		t.Fatal(err)
	}
	base := testOptions(t, svc, 18133)
	o.SyncInterval, o.CallTimeout, o.SettleTime, o.Logger, o.SDKDir = base.SyncInterval, base.CallTimeout, base.SettleTime, base.Logger, base.SDKDir
	r := newRegistrar(t, o)
	sync(t, r, lifecycle.Ready, lifecycle.CauseWarmup)
	src := nacos.NewSource(svc, nacos.WatchOptions{Server: nacos.Server{Addrs: []string{srv.Addr}}, NoSubscribe: true,
		ReadInterval: 200 * time.Millisecond, SDKDir: t.TempDir()})
	got := sourcetest.Listed(t, src, "127.0.0.1:18133", 20*time.Second)
	if _, ok := got.ReadyAt(); got.Meta["zone"] != "b" || got.Meta["track"] != "canary" || !ok {
		t.Fatalf("instance meta %v: want zone=b, track=canary and drainkit's %s", got.Meta, registry.MetaReadyAt)
	}
}
