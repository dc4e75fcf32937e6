package httpdrain_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/paced"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/registry"
)

// Issue 32: two consumers on one address, told apart by User-Agent, real
// HTTP clients on 127.0.0.1. A slow one (every 400 ms) and a fast one
// (every 5 ms) send for 2 s, then through the drain, the fast one for 1 s
// more, the slow one for 3 s. With quiet 100 ms (min 0) the instance-wide
// rule alone ends the window 100 ms after the fast caller stops, and the
// slow caller's next requests meet a closed listener. The window must wait
// for the slow caller by its own gap: none of its requests fails, the
// window ends at least two of its gaps after its last request, and well
// before propagation.max (both had moved).
func TestWindowWaitsForSlowHTTPCaller(t *testing.T) {
	tm := budget.Timings{WarmupTimeout: 5 * time.Second, PropagationQuiet: 100 * time.Millisecond,
		PropagationMax: 15 * time.Second, DrainTimeout: 2 * time.Second, StopTimeout: time.Second, GracePeriod: 25 * time.Second}
	in := start(t, tm, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), nil)
	client := func(agent string) func() error { return paced.HTTPGet(t, in.url("/"), agent) }
	slow, fast := paced.SlowAndFast(client("slow-consumer/1.0"), client("fast-consumer/1.0"), in.drain)
	if err := in.wait(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	tl, _ := in.lc.Timeline()
	end, _ := in.steps.Time(lifecycle.StepWindowEnded)
	paced.CheckWindow(t, slow, fast, tl.Start, end, tm.PropagationMax)
}

// Issue 32: the same two consumers, now alike in IP and User-Agent (Go's
// default), told apart only by the drainkit consumer header
// (registry.ConsumerHeader, what package consumer sends): behind one IP and
// one HTTP library they are still two callers, and the window waits for
// the slow one by its own gap.
func TestWindowTellsConsumersApartByConsumerHeader(t *testing.T) {
	tm := budget.Timings{WarmupTimeout: 5 * time.Second, PropagationQuiet: 100 * time.Millisecond,
		PropagationMax: 15 * time.Second, DrainTimeout: 2 * time.Second, StopTimeout: time.Second, GracePeriod: 25 * time.Second}
	in := start(t, tm, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), nil)
	client := func(name string) func() error {
		return paced.HTTPGetWith(t, in.url("/"), registry.ConsumerHeader, name)
	}
	slow, fast := paced.SlowAndFast(client("billing"), client("orders"), in.drain)
	if err := in.wait(20 * time.Second); err != nil {
		t.Fatal(err)
	}
	tl, _ := in.lc.Timeline()
	end, _ := in.steps.Time(lifecycle.StepWindowEnded)
	paced.CheckWindow(t, slow, fast, tl.Start, end, tm.PropagationMax)
}
