package telemetry_test

import (
	"context"
	"io"
	"log/slog"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
)

// testTimings keep a drain short but with a real propagation window.
func testTimings() budget.Timings {
	return budget.Timings{
		WarmupTimeout:    5 * time.Second,
		PropagationMin:   300 * time.Millisecond,
		PropagationQuiet: 100 * time.Millisecond,
		PropagationMax:   2 * time.Second,
		DrainTimeout:     3 * time.Second,
		StopTimeout:      time.Second,
		GracePeriod:      10 * time.Second,
	}
}

// newLifecycle returns a lifecycle that reacts to SIGUSR2 only (the test
// process's SIGTERM stays alone) and logs nowhere.
// o's zero timings become testTimings.
func newLifecycle(t *testing.T, o lifecycle.Options) *lifecycle.Lifecycle {
	t.Helper()
	if o.Timings == (budget.Timings{}) {
		o.Timings = testTimings()
	}
	o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	o.Signals = []os.Signal{syscall.SIGUSR2}
	lc, err := lifecycle.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return lc
}

// run starts lc.Run and returns a channel with its result.
func run(lc *lifecycle.Lifecycle) <-chan error {
	done := make(chan error, 1)
	go func() { done <- lc.Run(context.Background()) }()
	return done
}

// waitState waits up to 10s for lc to reach want.
func waitState(t *testing.T, lc *lifecycle.Lifecycle, want lifecycle.State) {
	t.Helper()
	sub, unsubscribe := lc.Subscribe()
	defer unsubscribe()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for lc.State() != want {
		select {
		case <-sub:
		case <-deadline.C:
			t.Fatalf("state %s, want %s", lc.State(), want)
		}
	}
}

// waitDone waits up to 20s for Run to return.
func waitDone(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return")
		return nil
	}
}
