package drainkit_test

import (
	"bytes"
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
)

// helpFlags runs the entry point with --help and returns the flags it lists.
func helpFlags(t *testing.T, opts ...drainkit.Option) []string {
	t.Helper()
	var out bytes.Buffer
	opts = append([]drainkit.Option{drainkit.WithHTTP("http", ":0", http.NotFoundHandler()),
		drainkit.WithEnv([]string{}), drainkit.WithOutput(&out)}, opts...)
	if code := drainkit.Run(context.Background(), []string{"--help"}, opts...); code != 0 {
		t.Fatalf("--help: exit %d: %s", code, out.String())
	}
	var flags []string
	for _, m := range regexp.MustCompile(`(?m)^\s+--([a-z0-9-]+)`).FindAllStringSubmatch(out.String(), -1) {
		flags = append(flags, m[1])
	}
	return flags
}

// TestRegistryFlagsOnlyWhenWired: a program that wires no registrar lists no
// registry flag in --help; one wiring a registrar lists exactly the flags of
// the keys it reads (here etcd's and the shared ones), nothing of Consul's.
func TestRegistryFlagsOnlyWhenWired(t *testing.T) {
	for _, f := range helpFlags(t) {
		if strings.HasPrefix(f, "registry-") {
			t.Errorf("--help without a registrar lists --%s", f)
		}
	}
	keys := append([]string{"registry.service", "registry.address"}, config.KeysUnder("registry.etcd.")...)
	flags := helpFlags(t, drainkit.WithRegistrar("etcd", drainkit.Registration{Keys: keys}))
	var got, want []string
	for _, f := range flags {
		if strings.HasPrefix(f, "registry-") {
			got = append(got, f)
		}
	}
	for _, k := range keys {
		want = append(want, config.FlagName(k))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("registry flags %v, want %v", got, want)
	}
	if !slices.Contains(flags, "propagation-min") {
		t.Errorf("the other settings' flags are gone: %v", flags)
	}
}
