package consul_test

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"slices"
	"testing"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/registry/consul"
)

// TestRegisterFlagsAreConsuls: a program wiring consul.Register lists the
// flags of Consul's settings and the shared registry ones in --help, and
// none of etcd's.
func TestRegisterFlagsAreConsuls(t *testing.T) {
	var out bytes.Buffer
	code := drainkit.Run(context.Background(), []string{"--help"}, drainkit.WithHTTP("http", ":0", http.NotFoundHandler()),
		drainkit.WithEnv([]string{}), drainkit.WithOutput(&out), consul.Register("orders", "http"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	var got []string
	for _, m := range regexp.MustCompile(`(?m)^\s+--(registry-[a-z0-9-]+)`).FindAllStringSubmatch(out.String(), -1) {
		got = append(got, m[1])
	}
	want := []string{"registry-address", "registry-call-timeout", "registry-deregister-critical-service-after",
		"registry-deregister-timeout", "registry-heartbeat-interval", "registry-service", "registry-ttl"}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("registry flags in --help:\n got %v\nwant %v", got, want)
	}
}
