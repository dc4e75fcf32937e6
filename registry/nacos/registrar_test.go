package nacos_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/nacos"
)

func newRegistrar(t *testing.T, o nacos.Options) *nacos.Registrar {
	t.Helper()
	r, err := nacos.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

func sync(t *testing.T, r *nacos.Registrar, to lifecycle.State, cause lifecycle.Cause) time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	at := time.Now()
	if err := r.Sync(ctx, lifecycle.Transition{To: to, Cause: cause, At: at}); err != nil {
		t.Fatalf("Sync(%s): %v", to, err)
	}
	return at
}

// TestRegistrarLifecycle: READY registers a healthy, enabled ephemeral
// instance with drainkit_ready_at; EJECTED keeps the registration but turns
// it unhealthy (gone from consumers' list); READY again brings it back with
// the new READY time; Deregister removes it and Confirm sees it gone.
func TestRegistrarLifecycle(t *testing.T) {
	const svc = "lifecycle-svc"
	o := testOptions(t, svc, 18001)
	o.Weight = 3
	o.Meta = map[string]string{"zone": "a"}
	r := newRegistrar(t, o)
	ready := sync(t, r, lifecycle.Ready, lifecycle.CauseChecks)
	waitList(t, adminList, svc, 18001, "registered after READY", func(in instance, ok bool) bool {
		return ok && in.Healthy && in.Enabled && in.Weight == 3 && in.Metadata["zone"] == "a" &&
			in.Metadata[registry.MetaReadyAt] == ready.UTC().Format(time.RFC3339Nano)
	})
	if st := r.Status(); st.Health != registry.Passing || st.Registrations != 1 {
		t.Fatalf("status %+v", st)
	}

	sync(t, r, lifecycle.Ejected, lifecycle.CauseChecks)
	waitList(t, adminList, svc, 18001, "registered, unhealthy and enabled after EJECTED", func(in instance, ok bool) bool {
		return ok && !in.Healthy && in.Enabled
	})
	waitList(t, consumerList, svc, 18001, "gone from consumers' list after EJECTED", func(_ instance, ok bool) bool { return !ok })
	if st := r.Status(); st.Health != registry.Critical {
		t.Fatalf("status %+v", st)
	}

	ready2 := sync(t, r, lifecycle.Ready, lifecycle.CauseChecks)
	waitList(t, consumerList, svc, 18001, "back in consumers' list with the new READY time", func(in instance, ok bool) bool {
		return ok && in.Metadata[registry.MetaReadyAt] == ready2.UTC().Format(time.RFC3339Nano)
	})

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	if err := r.Deregister(ctx); err != nil {
		t.Fatal(err)
	}
	dereg := time.Since(start)
	if err := r.Confirm(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("deregistered in %s, confirmed gone %s after the start", dereg.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if err := r.Sync(ctx, lifecycle.Transition{To: lifecycle.Ready}); err != registry.ErrDeregistered {
		t.Fatalf("Sync after Deregister = %v", err)
	}
}

// waitList polls list until cond holds for the instance on port (found
// says whether it is listed), up to 5s, and returns it.
func waitList(t *testing.T, list func(string) ([]instance, error), svc string, port int, what string,
	cond func(in instance, found bool) bool) instance {
	t.Helper()
	return waitListWithin(t, 5*time.Second, list, svc, port, what, cond)
}

// waitListWithin is waitList with its own timeout.
func waitListWithin(t *testing.T, timeout time.Duration, list func(string) ([]instance, error), svc string, port int,
	what string, cond func(in instance, found bool) bool) instance {
	t.Helper()
	var in instance
	took := eventually(t, timeout, what, func() (bool, string) {
		l, err := list(svc)
		if err != nil {
			return false, err.Error()
		}
		var ok bool
		in, ok = find(l, port)
		return cond(in, ok), fmt.Sprintf("%+v found %v", in, ok)
	})
	t.Logf("%s: after %s", what, took.Round(time.Millisecond))
	return in
}
