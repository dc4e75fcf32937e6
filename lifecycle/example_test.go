package lifecycle_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/lifecycle/lifecycletest"
)

// transitions is an Observer that hands every transition to a channel, in
// the order the lifecycle made them.
type transitions chan lifecycle.Transition

func (c transitions) OnTransition(t lifecycle.Transition)            { c <- t }
func (c transitions) OnDrainStep(lifecycle.Timeline, lifecycle.Step) {}

// exampleTimings: no propagation window and a short drain budget, so the
// example runs at once.
func exampleTimings() budget.Timings {
	return budget.Timings{WarmupTimeout: time.Second, DrainTimeout: time.Second, StopTimeout: time.Second, GracePeriod: 3 * time.Second}
}

// A Lifecycle with one server goes READY after warm-up and drains when asked:
// the observer sees each transition, and the timeline records each step of
// the drain.
func Example() {
	seen := make(transitions, 8)
	lc, err := lifecycle.New(lifecycle.Options{
		Timings:   exampleTimings(),
		Signals:   []os.Signal{}, // none: the example drains through Drain
		Logger:    slog.New(slog.DiscardHandler),
		Observers: []lifecycle.Observer{seen},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	lc.AddServer("api", lifecycletest.NewServer()) // a fake with no request in flight
	lc.OnWarmup("caches", func(context.Context) error { return nil })

	done := make(chan error, 1)
	go func() { done <- lc.Run(context.Background()) }()
	for t := range seen {
		fmt.Printf("%s -> %s (%s)\n", t.From, t.To, t.Cause)
		if t.To == lifecycle.Ready {
			_ = lc.Drain("rollout") // as SIGTERM or POST /drain would
		}
		if t.To == lifecycle.Stopped {
			break
		}
	}
	fmt.Println("exit code", lifecycle.ExitCode(<-done))
	tl, _ := lc.Timeline()
	for _, s := range tl.Steps {
		fmt.Println(s.Name)
	}
	// Output:
	// STARTING -> READY (warmup)
	// READY -> DRAINING (operator)
	// DRAINING -> STOPPED (drain)
	// exit code 0
	// not_ready
	// window_ended
	// listeners_closed
	// idle
	// stop_hooks_done
}

// A failed warm-up stops the instance without a drain: Run returns exit code
// 1 and there is no timeline.
func ExampleLifecycle_Run_warmupFailure() {
	lc, err := lifecycle.New(lifecycle.Options{
		Timings: exampleTimings(),
		Signals: []os.Signal{}, // none: the example drains through Drain
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	lc.OnWarmup("db", func(context.Context) error { return errors.New("connection refused") })
	lc.OnStop("close pool", func(context.Context) error { fmt.Println("stop hook ran"); return nil })
	err = lc.Run(context.Background())
	_, drained := lc.Timeline()
	fmt.Println(lc.State(), lifecycle.ExitCode(err), drained)
	fmt.Println(err)
	// Output:
	// stop hook ran
	// STOPPED 1 false
	// exit 1: warm-up hook db: connection refused
}

// Validate names the configuration key that is out of range and the range it
// must be in.
func ExampleTimings_Validate() {
	tm := budget.DefaultTimings()
	tm.GracePeriod = 20 * time.Second
	fmt.Println(tm.Validate())
	tm.GracePeriod = tm.MinGracePeriod()
	fmt.Println(tm.GracePeriod, tm.Validate())
	// Output:
	// grace_period: 20s is out of range: must be >= 24s: propagation.max + drain.timeout + stop.timeout (12s + 6s + 3s) + a margin of 10% of grace_period, at least 1s
	// 24s <nil>
}

// ExitCode maps Run's result to the process's exit code: call
// os.Exit(lifecycle.ExitCode(err)) last in main.
func ExampleExitCode() {
	fmt.Println(lifecycle.ExitCode(nil))
	fmt.Println(lifecycle.ExitCode(errors.New("lifecycle: Run called twice")))
	// Output:
	// 0
	// 1
}

// Draining tells code outside a request, here a background refresher, that
// the instance is leaving rotation: it stops taking new work at the drain's
// start, while the servers still serve through the propagation window.
func ExampleLifecycle_Draining() {
	lc, err := lifecycle.New(lifecycle.Options{
		Timings: exampleTimings(),
		Signals: []os.Signal{}, // none: the example drains through Drain
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	refresherDone := make(chan struct{})
	go func() { // a background loop of the application
		defer close(refresherDone)
		tick := time.NewTicker(time.Minute)
		defer tick.Stop()
		for {
			select {
			case <-lc.Draining():
				fmt.Println("refresher: draining, no new work")
				return
			case <-tick.C:
				// refresh a cache
			}
		}
	}()
	lc.OnWarmup("drain at once", func(context.Context) error { return lc.Drain("rollout") })
	err = lc.Run(context.Background())
	<-refresherDone
	fmt.Println("exit code", lifecycle.ExitCode(err))
	// Output:
	// refresher: draining, no new work
	// exit code 0
}
