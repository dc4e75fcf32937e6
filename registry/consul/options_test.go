package consul

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"
)

func TestOptionsValidate(t *testing.T) {
	base := DefaultOptions("api", 8080)
	for _, c := range []struct {
		name string
		mod  func(*Options)
		key  string // "" = valid
	}{
		{"defaults", func(*Options) {}, ""},
		{"heartbeat exactly TTL/3", func(o *Options) { o.TTL, o.HeartbeatInterval = 3*time.Second, time.Second }, ""},
		{"DeregisterCriticalServiceAfter zero means 1m", func(o *Options) { o.DeregisterCriticalServiceAfter = 0 }, ""},
		{"DeregisterCriticalServiceAfter 30s", func(o *Options) { o.DeregisterCriticalServiceAfter = 30 * time.Second }, "registry.deregister_critical_service_after"},
		{"DeregisterCriticalServiceAfter 25h", func(o *Options) { o.DeregisterCriticalServiceAfter = 25 * time.Hour }, "registry.deregister_critical_service_after"},
		{"TTL 0", func(o *Options) { o.TTL = 0 }, "registry.ttl"},
		{"TTL 500ms", func(o *Options) { o.TTL = 500 * time.Millisecond }, "registry.ttl"},
		{"heartbeat longer than TTL/3", func(o *Options) { o.TTL, o.HeartbeatInterval = 3*time.Second, 1001*time.Millisecond }, "registry.heartbeat_interval"},
		{"heartbeat negative", func(o *Options) { o.HeartbeatInterval = -time.Second }, "registry.heartbeat_interval"},
		{"call timeout longer than heartbeat", func(o *Options) { o.CallTimeout = 4 * time.Second }, "registry.call_timeout"},
		{"no service", func(o *Options) { o.Service = "" }, "registry.service"},
		{"service name with a space", func(o *Options) { o.Service = "bad name!" }, "registry.service"},
		{"service name of 256 bytes", func(o *Options) { o.Service = strings.Repeat("a", 256) }, "registry.service"},
		{"service name with dots and dashes", func(o *Options) { o.Service = "api-v2.internal_x" }, ""},
		{"port 0", func(o *Options) { o.Port = 0 }, "registry.port"},
		{"reserved meta", func(o *Options) { o.Meta = map[string]string{metaManaged: "x"} }, "registry.meta"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := base
			c.mod(&o)
			err := o.Validate()
			_, newErr := New(o)
			if c.key == "" {
				if err != nil || newErr != nil {
					t.Fatalf("Validate = %v, New = %v; want valid", err, newErr)
				}
				return
			}
			var re *budget.RangeError
			if !errors.As(err, &re) || re.Key != c.key {
				t.Fatalf("Validate = %v; want a *budget.RangeError for %s", err, c.key)
			}
			if newErr == nil || !strings.Contains(newErr.Error(), c.key) {
				t.Fatalf("New = %v; want an error naming %s", newErr, c.key)
			}
		})
	}
}

func TestOptionsDefaults(t *testing.T) {
	o := DefaultOptions("api", 8080).withDefaults()
	if o.TTL != 10*time.Second || o.HeartbeatInterval != o.TTL/3 || o.CallTimeout != 2*time.Second ||
		o.DeregisterCriticalServiceAfter != time.Minute {
		t.Fatalf("defaults: %+v", o)
	}
	o = Options{Service: "x", Port: 1, TTL: time.Second}.withDefaults()
	if o.HeartbeatInterval != time.Second/3 || o.CallTimeout != o.HeartbeatInterval {
		t.Fatalf("CallTimeout default must not exceed the heartbeat: %+v", o)
	}
}
