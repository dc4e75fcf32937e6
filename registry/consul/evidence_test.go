package consul

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/internal/paced"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/registry/consul/consultest"
)

// Issue 32, drain time toward the evidence, against a real Consul agent:
// with propagation.min left at its default (Options.MinIsDefault) and 8s,
// the window ends once Consul confirmed the deregistration and both real
// HTTP callers (a slow one, every 400 ms, and a fast one) have moved,
// well before min, and none of their requests fails.
func TestConfirmedDeregistrationEndsWindowOnEvidence(t *testing.T) {
	a := consultest.Start(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o, _ := testOptions(t, a, "evidence", ln.Addr().(*net.TCPAddr).Port)
	r := newRegistrar(t, o)
	tm := budget.Timings{WarmupTimeout: 10 * time.Second, PropagationMin: 8 * time.Second, PropagationQuiet: 100 * time.Millisecond,
		PropagationMax: 15 * time.Second, DrainTimeout: time.Second, StopTimeout: time.Second, GracePeriod: 20 * time.Second}
	lc := newLifecycle(t, r, lifecycle.Options{Timings: tm, MinIsDefault: true})
	srv := &http.Server{Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), ReadHeaderTimeout: 5 * time.Second}
	lc.AddServer("http", httpdrain.New(srv, ln))
	rn := start(t, lc)
	eventually(t, 10*time.Second, "READY", func() (bool, string) { return lc.State() == lifecycle.Ready, lc.State().String() })
	client := func(agent string) func() error { return paced.HTTPGet(t, "http://"+ln.Addr().String()+"/", agent) }
	slow, fast := paced.SlowAndFast(client("slow-consumer/1.0"), client("fast-consumer/1.0"), func() { _ = lc.Drain("test") })
	if err := rn.wait(t, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	tl, _ := lc.Timeline()
	end, _ := tl.Offset(lifecycle.StepWindowEnded)
	confirmed, ok := tl.Offset(lifecycle.StepConfirmed)
	if !ok || confirmed > end {
		t.Fatalf("Consul's confirmation at %v (recorded %v), window end at %v: want it confirmed first", confirmed, ok, end)
	}
	paced.CheckWindow(t, slow, fast, tl.Start, tl.Start.Add(end), tm.PropagationMax)
	if end >= tm.PropagationMin {
		t.Errorf("window ended at %v, not before the default propagation.min %v although Consul confirmed at %v and both callers had moved",
			end, tm.PropagationMin, confirmed)
	}
}
