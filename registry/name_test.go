package registry_test

import (
	"strings"
	"testing"

	"github.com/drainkit/drainkit/registry"
)

func TestValidServiceName(t *testing.T) {
	for name, want := range map[string]bool{
		"web":                    true,
		"a-b_c.d9":               true,
		strings.Repeat("x", 255): true,
		"":                       false,
		strings.Repeat("x", 256): false,
		"has space":              false,
		"slash/in":               false,
		"ünicode":                false,
	} {
		if got := registry.ValidServiceName(name); got != want {
			t.Errorf("ValidServiceName(%q) = %v, want %v", name, got, want)
		}
	}
}
