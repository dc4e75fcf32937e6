package registrytest_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/registrytest"
)

func tr(to lifecycle.State, cause lifecycle.Cause) lifecycle.Transition {
	return lifecycle.Transition{To: to, Cause: cause, At: time.Now()}
}

func TestMemoryFollowsTransitions(t *testing.T) {
	ctx := context.Background()
	m := registrytest.NewMemory("api")
	// EJECTED before the first READY registers nothing.
	if err := m.Sync(ctx, tr(lifecycle.Ejected, lifecycle.CauseChecks)); err != nil {
		t.Fatal(err)
	}
	if s := m.Status(); s.Health != registry.Absent || s.Registrations != 0 {
		t.Fatalf("after early EJECTED: %+v", s)
	}
	steps := []struct {
		t    lifecycle.Transition
		want registry.Health
	}{
		{tr(lifecycle.Ready, lifecycle.CauseWarmup), registry.Passing},
		{tr(lifecycle.Ejected, lifecycle.CauseChecks), registry.Critical},
		{tr(lifecycle.Ready, lifecycle.CauseChecks), registry.Passing},
		{tr(lifecycle.Ejected, lifecycle.CauseOperator), registry.Maintenance},
		{tr(lifecycle.Ready, lifecycle.CauseOperator), registry.Passing},
	}
	for _, s := range steps {
		if err := m.Sync(ctx, s.t); err != nil {
			t.Fatal(err)
		}
		if got := m.Status().Health; got != s.want {
			t.Fatalf("after %s/%s: health %s, want %s", s.t.To, s.t.Cause, got, s.want)
		}
	}
	if n := m.Status().Registrations; n != 1 {
		t.Fatalf("Registrations = %d, want 1", n)
	}
	if err := m.Sync(ctx, tr(lifecycle.Draining, lifecycle.CauseSignal)); err == nil {
		t.Fatal("Sync(DRAINING) succeeded; it is a contract violation")
	}
	if err := m.Deregister(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Confirm(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Sync(ctx, tr(lifecycle.Ready, lifecycle.CauseWarmup)); !errors.Is(err, registry.ErrDeregistered) {
		t.Fatalf("Sync after Deregister = %v, want registry.ErrDeregistered", err)
	}
	s := m.Status()
	if s.Health != registry.Absent || !s.Deregistering || !strings.Contains(s.LastError, "deregistered") {
		t.Fatalf("final status %+v", s)
	}
	ops := m.Ops()
	if len(ops) != len(steps)+5 || ops[len(ops)-3].Kind != registrytest.OpDeregister || ops[len(ops)-2].Kind != registrytest.OpConfirm {
		t.Fatalf("ops: %+v", ops)
	}
}

func TestMemoryConfirmWaitsForNotPassing(t *testing.T) {
	ctx := context.Background()
	m := registrytest.NewMemory("api")
	if err := m.Sync(ctx, tr(lifecycle.Ready, lifecycle.CauseWarmup)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- m.Confirm(ctx) }()
	select {
	case err := <-done:
		t.Fatalf("Confirm returned %v while the instance is passing", err)
	case <-time.After(50 * time.Millisecond):
		// Not a synchronisation: only a window in which a wrong Confirm
		// would have returned.
	}
	if err := m.Deregister(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Confirm = %v", err)
	}
}

func TestMemoryFailuresAndHangs(t *testing.T) {
	m := registrytest.NewMemory("api")
	boom := errors.New("boom")
	m.SetError(registrytest.OpSync, boom)
	if err := m.Sync(context.Background(), tr(lifecycle.Ready, lifecycle.CauseWarmup)); !errors.Is(err, boom) {
		t.Fatalf("Sync = %v, want boom", err)
	}
	if s := m.Status(); s.Health != registry.Absent || s.LastError != "boom" {
		t.Fatalf("status after failed sync: %+v", s)
	}
	m.SetError(registrytest.OpSync, nil)
	if err := m.Sync(context.Background(), tr(lifecycle.Ready, lifecycle.CauseWarmup)); err != nil {
		t.Fatal(err)
	}

	m.SetHang(registrytest.OpDeregister, true)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := m.Deregister(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hanging Deregister = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d < 90*time.Millisecond {
		t.Fatalf("hanging Deregister returned after %s, before its deadline", d)
	}
	if s := m.Status(); s.Health != registry.Passing || !s.Deregistering {
		t.Fatalf("after failed Deregister: %+v (still registered, but deregistering)", s)
	}
	if err := m.Close(); err != nil || !m.Closed() {
		t.Fatalf("Close = %v, Closed = %v", err, m.Closed())
	}
}

// TestMemoryWithLifecycle drives Memory from a real Lifecycle: READY
// registers, an operator eject puts it in maintenance, restore brings it
// back, and a drain with a hanging registry still completes.
func TestMemoryWithLifecycle(t *testing.T) {
	tm := budget.Timings{WarmupTimeout: time.Second, PropagationMin: 50 * time.Millisecond,
		PropagationQuiet: 0, PropagationMax: 300 * time.Millisecond, DrainTimeout: time.Second,
		StopTimeout: time.Second, GracePeriod: 10 * time.Second}
	lc, err := lifecycle.New(lifecycle.Options{Timings: tm, DeregisterTimeout: 200 * time.Millisecond, Signals: []os.Signal{syscall.SIGUSR2}})
	if err != nil {
		t.Fatal(err)
	}
	m := registrytest.NewMemory("api")
	lc.AddRegistrar("memory", m)
	run := make(chan error, 1)
	go func() { run <- lc.Run(context.Background()) }()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	waitHealth := func(h registry.Health) {
		t.Helper()
		if err := m.Wait(ctx, func(s registry.Status) bool { return s.Health == h }); err != nil {
			t.Fatalf("waiting for %s: %v (status %+v)", h, err, m.Status())
		}
	}
	waitHealth(registry.Passing)
	if err := lc.Eject("test"); err != nil {
		t.Fatal(err)
	}
	waitHealth(registry.Maintenance)
	if err := lc.Restore("test"); err != nil {
		t.Fatal(err)
	}
	waitHealth(registry.Passing)

	m.SetHang(registrytest.OpDeregister, true)
	start := time.Now()
	if err := lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	if err := <-run; err != nil {
		t.Fatalf("Run = %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("drain with a hanging registry took %s", d)
	}
	tl, _ := lc.Timeline()
	for _, st := range tl.Steps {
		if st.Name == lifecycle.StepDeregistered && st.Err == "" {
			t.Fatalf("deregistered step has no error although the registry hung: %+v", tl.Steps)
		}
	}
}
