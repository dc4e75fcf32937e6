package consul_test

import (
	"slices"
	"testing"

	"github.com/drainkit/drainkit/internal/helpflags"
	"github.com/drainkit/drainkit/registry/consul"
)

// TestRegisterFlagsAreConsuls: a program wiring consul.Register lists the
// flags of Consul's settings and the shared registry ones in --help, and
// none of etcd's.
func TestRegisterFlagsAreConsuls(t *testing.T) {
	got := helpflags.Registry(t, consul.Register("orders"))
	want := []string{"registry-address", "registry-call-timeout", "registry-deregister-critical-service-after",
		"registry-deregister-timeout", "registry-heartbeat-interval", "registry-meta", "registry-service", "registry-ttl"}
	if !slices.Equal(got, want) {
		t.Errorf("registry flags in --help:\n got %v\nwant %v", got, want)
	}
}
