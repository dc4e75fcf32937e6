package consul_test

import (
	"testing"
	"time"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/registry/consul"
)

func TestOptionsFrom(t *testing.T) {
	c, err := config.Load(config.Sources{Env: []string{"DRAINKIT_REGISTRY_TTL=30s", "DRAINKIT_REGISTRY_CALL_TIMEOUT=1s"}})
	if err != nil {
		t.Fatal(err)
	}
	o, err := consul.OptionsFrom(c.Registry, "svc", 8080)
	if err != nil {
		t.Errorf("consul rejects what config accepted: %v", err)
	}
	if o.Service != "svc" || o.Port != 8080 || o.TTL != 30*time.Second || o.CallTimeout != time.Second ||
		o.HeartbeatInterval != 0 || o.DeregisterCriticalServiceAfter != time.Minute {
		t.Errorf("ConsulOptions = %+v", o)
	}
	// Defaults agree with consul.DefaultOptions, and config accepts nothing
	// consul would reject.
	if _, err := consul.OptionsFrom(config.Default().Registry, "svc", 1); err != nil {
		t.Errorf("defaults: %v", err)
	}
	c, err = config.Load(config.Sources{Env: []string{"DRAINKIT_REGISTRY_SERVICE=named"}})
	if o, _ := consul.OptionsFrom(c.Registry, "svc", 1); err != nil || o.Service != "named" {
		t.Errorf("registry.service not used: %v", err)
	}
}

// FuzzOptionsFrom: whatever registry settings config.Load accepts (from an
// environment variable of any config key), Consul's Options accept too, so a
// bad value fails in Load, naming its key, and never at registration.
func FuzzOptionsFrom(f *testing.F) {
	f.Add(uint8(0), "5s")
	f.Add(uint8(3), "-1s")
	f.Add(uint8(7), "9999999999h")
	f.Add(uint8(9), "")
	f.Add(uint8(15), "0.0")
	keys := config.Keys()
	f.Fuzz(func(t *testing.T, key uint8, value string) {
		k := keys[int(key)%len(keys)]
		c, err := config.Load(config.Sources{Env: []string{config.EnvVar(k) + "=" + value}})
		if err != nil {
			return
		}
		if _, err := consul.OptionsFrom(c.Registry, "svc", 1); err != nil {
			t.Fatalf("Load accepted %s=%q, which consul rejects: %v", config.EnvVar(k), value, err)
		}
	})
}
