package lifecycletest_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/lifecycle/lifecycletest"
)

// A request that never ends is cut at drain.timeout, and Run reports it
// with exit code 1.
func Example() {
	lc, err := lifecycle.New(lifecycle.Options{
		Timings: budget.Timings{WarmupTimeout: time.Second, DrainTimeout: 100 * time.Millisecond,
			StopTimeout: 100 * time.Millisecond, GracePeriod: 2 * time.Second},
		Signals: []os.Signal{}, // none: the example drains through Drain
		Logger:  slog.New(slog.DiscardHandler),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	srv := lifecycletest.NewServer()
	lc.AddServer("api", srv)

	sub, unsubscribe := lc.Subscribe()
	done := make(chan error, 1)
	go func() { done <- lc.Run(context.Background()) }()
	for t := range sub {
		if t.To == lifecycle.Ready {
			break
		}
	}
	unsubscribe()
	srv.Begin() // a stuck request: its end is never called
	_ = lc.Drain("rollout")
	err = <-done

	tl, _ := lc.Timeline()
	fmt.Println(srv.Calls())
	fmt.Println("in flight at close:", tl.InFlightAtClose.Requests, "force-closed:", tl.ForceClosed)
	fmt.Println("exit code", lifecycle.ExitCode(err))
	// Output:
	// [LameDuck CloseListeners AwaitIdle ForceClose]
	// in flight at close: 1 force-closed: 1
	// exit code 1
}
