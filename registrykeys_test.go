package drainkit_test

import (
	"slices"
	"testing"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/internal/helpflags"
)

// TestRegistryFlagsOnlyWhenWired: a program that wires no registrar lists no
// registry flag in --help; one wiring a registrar lists exactly the flags of
// the keys it reads (here etcd's and the shared ones), nothing of Consul's.
func TestRegistryFlagsOnlyWhenWired(t *testing.T) {
	if got := helpflags.Registry(t); len(got) != 0 {
		t.Errorf("--help without a registrar lists %v", got)
	}
	keys := append(config.SharedRegistryKeys(), config.KeysUnder("registry.etcd.")...)
	got := helpflags.Registry(t, drainkit.WithRegistrar("etcd", drainkit.Registration{Keys: keys}))
	var want []string
	for _, k := range keys {
		want = append(want, config.FlagName(k))
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("registry flags %v, want %v", got, want)
	}
	if !slices.Contains(helpflags.Flags(t), "propagation-min") {
		t.Error("the other settings' flags are gone")
	}
}
