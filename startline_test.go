package drainkit_test

import (
	"strings"
	"testing"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry/registrytest"
)

// TestStartLineNamesRegistrars: the start line names the registrars the
// instance registers through, by their WithRegistrar names; one whose Build
// returned nil (registering nowhere) is not named.
func TestStartLineNamesRegistrars(t *testing.T) {
	memory := func(*config.Config, drainkit.Bound) (lifecycle.Registrar, error) {
		return registrytest.NewMemory("svc"), nil
	}
	nowhere := func(*config.Config, drainkit.Bound) (lifecycle.Registrar, error) { return nil, nil }
	log := startedLogged(t,
		drainkit.WithRegistrar("mem-a", drainkit.Registration{Build: memory}),
		drainkit.WithRegistrar("unset", drainkit.Registration{Build: nowhere}),
		drainkit.WithRegistrar("mem-b", drainkit.Registration{Build: memory}))
	if !strings.Contains(log, `"registries":"mem-a,mem-b"`) {
		t.Errorf("the start line does not name mem-a and mem-b; log:\n%s", log)
	}
}
