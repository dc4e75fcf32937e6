package consumer_test

import (
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/registry"
)

// TestSlowStartRerampsOnNewReadyAt: an instance that keeps its ID and
// address but publishes a later READY time (READY again after EJECTED, see
// registry.MetaReadyAt) ramps again, like Envoy's slow start for an endpoint
// healthy again; the others keep full weight.
func TestSlowStartRerampsOnNewReadyAt(t *testing.T) {
	bs := []*backend{newBackend(t, "a", nil), newBackend(t, "b", nil), newBackend(t, "c", nil), newBackend(t, "d", nil)}
	f := newFeed()
	push := func(rev uint64, readyD time.Time) {
		long := time.Now().Add(-time.Hour)
		ins := []registry.Instance{}
		for _, b := range bs {
			in := b.instance()
			at := long
			if b.name == "d" {
				at = readyD
			}
			in.Meta = map[string]string{registry.MetaReadyAt: at.UTC().Format(time.RFC3339Nano)}
			ins = append(ins, in)
		}
		f.ch <- registry.View{Service: "orders", Instances: ins, Revision: rev, Received: time.Now(), Source: "feed"}
	}
	ramping := func(tr *consumer.Transport) map[string]bool {
		out := map[string]bool{}
		for _, in := range tr.Instances() {
			out[in.ID] = in.Ramping
		}
		return out
	}
	push(1, time.Now().Add(-time.Hour))
	w, tr, _ := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{SlowStart: consumer.SlowStart{Window: time.Minute}})
	eventually(t, 5*time.Second, "first view applied", func() bool { return w.Status().Revision == 1 })
	if got := ramping(tr); len(got) != 4 || got["d"] || tr.Status().SlowStart {
		t.Fatalf("ramping %v before the new READY time; want 4 instances, none ramping", got)
	}
	push(2, time.Now())
	eventually(t, 5*time.Second, "second view applied", func() bool { return w.Status().Revision == 2 })
	got := ramping(tr)
	if !got["d"] || got["a"] || got["b"] || got["c"] || !tr.Status().SlowStart {
		t.Fatalf("ramping %v after d's new READY time; want only d", got)
	}
}

// TestSlowStartReadyInFuture (issue 18 item 6): an instance whose READY time
// is an hour in the future (its host's clock is ahead) ramps from the moment
// it was first seen, for Window (not until an hour from now), and the skew
// is logged; one whose READY time is absurdly old (a clock reset to 1970)
// gets full weight at once.
func TestSlowStartReadyInFuture(t *testing.T) {
	bs := []*backend{newBackend(t, "a", nil), newBackend(t, "b", nil), newBackend(t, "c", nil), newBackend(t, "d", nil)}
	f := newFeed()
	ins := []registry.Instance{}
	for _, b := range bs {
		in := b.instance()
		at := time.Now().Add(-time.Hour)
		switch b.name {
		case "c":
			at = time.Unix(0, 0)
		case "d":
			at = time.Now().Add(time.Hour)
		}
		in.Meta = map[string]string{registry.MetaReadyAt: at.UTC().Format(time.RFC3339Nano)}
		ins = append(ins, in)
	}
	f.ch <- registry.View{Service: "orders", Instances: ins, Revision: 1, Received: time.Now(), Source: "feed"}
	const window = 3 * time.Second
	_, tr, logs := newClient(t, f, consumer.WatcherOptions{}, consumer.Options{SlowStart: consumer.SlowStart{Window: window}})
	ramping := func() map[string]bool {
		got := map[string]bool{}
		for _, in := range tr.Instances() {
			got[in.ID] = in.Ramping
		}
		return got
	}
	if got := ramping(); len(got) != 4 || !got["d"] || got["a"] || got["b"] || got["c"] {
		t.Fatalf("ramping %v; want only d", got)
	}
	eventually(t, window+5*time.Second, "d's ramp ends a Window after it was first seen", func() bool { return !ramping()["d"] })
	if l := logs.String(); !strings.Contains(l, "READY time is in the future") || !strings.Contains(l, "instance=d") {
		t.Fatalf("the clock skew of d is not logged:\n%s", l)
	}
}
