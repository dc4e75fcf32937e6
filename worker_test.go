package drainkit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/internal/childtest"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/workdrain"
)

// WithWorker adds a participant with no listener: its work in flight shows
// in GET /state as in_flight.work, and the drain waits for it (exit 0).
func TestWithWorkerCountsWorkInState(t *testing.T) {
	taken, release := make(chan struct{}), make(chan struct{})
	w := workdrain.New(workdrain.AtDrainStart, func(ctx context.Context, w *workdrain.Worker) error {
		go func() {
			_ = w.Do(func(context.Context) error { close(taken); <-release; return nil })
		}()
		<-ctx.Done()
		return nil
	})
	a := started(t, drainkit.WithWorker("jobs", w))
	<-taken
	defer close(release) // before the cleanup's drain, which waits for the unit
	resp, err := http.Get("http://" + a["admin"].String() + "/state")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		InFlight struct {
			Work int64 `json:"work"`
		} `json:"in_flight"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	if st.InFlight.Work != 1 {
		t.Fatalf("GET /state in_flight.work = %d, want 1", st.InFlight.Work)
	}
}

// childProgramEnv names, in the environment of this test binary re-executed
// by a test (os.Args[0]), which of childPrograms it runs as a real service
// process instead of the tests.
const childProgramEnv = "DRAINKITTEST_CHILD_PROGRAM"

// childPrograms are the service programs a test runs as a child process of
// its own binary: each is a main's body, returning the exit code.
var childPrograms = map[string]func() int{
	// docs/workers.md's ticker (workdrain's Example_ticker): a process that
	// only runs a worker and registers nowhere.
	"worker": func() int { return drainkit.Main(drainkit.WithWorker("compactor", ticker())) },
	// The same worker in a process that also serves HTTP, as natsdrain's
	// example in docs/workers.md does.
	"worker+http": func() int {
		return drainkit.Main(drainkit.WithHTTP("http", ":8080", http.NotFoundHandler()), drainkit.WithWorker("compactor", ticker()))
	},
}

// ticker is a worker whose every tick (10 ms) is one unit of work.
func ticker() *workdrain.Worker {
	return workdrain.New(workdrain.AtDrainStart, func(ctx context.Context, w *workdrain.Worker) error {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
				_ = w.Do(func(ctx context.Context) error { return ctx.Err() })
			}
		}
	})
}

// startChild runs childPrograms[prog] as a child process (this test binary,
// re-executed) with env, and waits for its start line.
func startChild(t *testing.T, prog string, env ...string) *childtest.Child {
	t.Helper()
	env = append(env, childProgramEnv+"="+prog)
	if prog == "worker" { // no HTTP listener: it would refuse --http-addr
		return childtest.StartWorker(t, os.Args[0], env)
	}
	return childtest.Start(t, os.Args[0], env)
}

// TestWorkerOnlyDrainHoldsNoWindow: a process that only runs a worker and
// registers nowhere (docs/workers.md's ticker, a real child process) drains
// on SIGTERM without the propagation window, and says so: nothing routes to
// it, so waiting out propagation.min (5 s by default) only delayed its exit
// (issue 33 item 5). The same worker in a process that also serves HTTP
// still holds the window (at least propagation.min, here 1 s).
func TestWorkerOnlyDrainHoldsNoWindow(t *testing.T) {
	t.Run("worker only", func(t *testing.T) {
		c := startChild(t, "worker")
		c.WaitState("READY")
		sig := time.Now()
		c.Signal(syscall.SIGTERM)
		if code := c.WaitExit(20 * time.Second); code != 0 {
			t.Fatalf("exit code %d", code)
		}
		win := c.TimelineStep(lifecycle.StepWindowEnded)
		t.Logf("SIGTERM to exit %s; window ended at %s", c.ExitAt().Sub(sig).Round(time.Millisecond), win.At)
		// Without a window the window ends with t0's prompt steps (the
		// lame duck); with one it ends at propagation.min, 5 s.
		if !win.OK || win.At >= budget.DefaultTimings().PropagationMin {
			t.Errorf("window_ended %+v: want it before propagation.min (%s): nothing routes to a worker-only process",
				win, budget.DefaultTimings().PropagationMin)
		}
		if lines := c.LogLines("drainkit: no propagation window: nothing routes to this instance (no registrar, no server consumers route to)"); len(lines) != 1 {
			t.Errorf("%d lines saying why there was no window, want 1", len(lines))
		}
	})
	t.Run("worker and HTTP", func(t *testing.T) {
		c := startChild(t, "worker+http", "DRAINKIT_PROPAGATION_MIN=1s")
		c.WaitState("READY")
		c.Signal(syscall.SIGTERM)
		if code := c.WaitExit(20 * time.Second); code != 0 {
			t.Fatalf("exit code %d", code)
		}
		if win := c.TimelineStep(lifecycle.StepWindowEnded); !win.OK || win.At < time.Second {
			t.Errorf("window_ended %+v: want the window held for propagation.min (1s)", win)
		}
	})
}
