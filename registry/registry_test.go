package registry_test

import (
	"regexp"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func tr(to lifecycle.State, cause lifecycle.Cause) lifecycle.Transition {
	return lifecycle.Transition{To: to, Cause: cause, At: time.Now()}
}

func TestInstanceID(t *testing.T) {
	a, b := registry.InstanceID("my svc/1", 8080), registry.InstanceID("my svc/1", 8080)
	if a == b {
		t.Fatalf("two calls returned the same ID %q", a)
	}
	re := regexp.MustCompile(`^my-svc-1-[A-Za-z0-9_.-]+-8080-[0-9a-f]{12}$`)
	if !re.MatchString(a) {
		t.Fatalf("ID %q does not match %s", a, re)
	}
}

func TestHealthFor(t *testing.T) {
	for _, c := range []struct {
		t    lifecycle.Transition
		want registry.Health
	}{
		{tr(lifecycle.Ready, lifecycle.CauseWarmup), registry.Passing},
		{tr(lifecycle.Ejected, lifecycle.CauseChecks), registry.Critical},
		{tr(lifecycle.Ejected, lifecycle.CauseOperator), registry.Maintenance},
		{tr(lifecycle.Draining, lifecycle.CauseSignal), registry.Absent},
	} {
		if got := registry.HealthFor(c.t); got != c.want {
			t.Errorf("registry.HealthFor(%s/%s) = %s, want %s", c.t.To, c.t.Cause, got, c.want)
		}
	}
}
