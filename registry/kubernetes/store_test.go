package kubernetes

import (
	"context"
	"errors"
	"testing"

	"github.com/drainkit/drainkit/registry"
	discoveryv1 "k8s.io/api/discovery/v1"
)

// The store as client-go's reflector drives it (Replace for each list,
// Add/Update/Delete for watch events, each request's outcome): revisions,
// the epoch of a relist that went backwards, error views. A relist after a
// broken watch runs on a real cluster in internal/clustertest; an API
// server whose etcd goes back in time does not, hence this test.
func TestStoreRevisionsEpochsErrors(t *testing.T) {
	w := newWatch("default", "web", WatchOptions{}.withDefaults())
	var got []registry.View
	deliver := func() registry.View {
		t.Helper()
		n := len(got)
		w.deliver(func(v registry.View) { got = append(got, v) })
		if len(got) != n+1 {
			t.Fatalf("no view delivered")
		}
		return got[n]
	}
	quiet := func() {
		t.Helper()
		n := len(got)
		w.deliver(func(v registry.View) { got = append(got, v) })
		if len(got) != n {
			t.Fatalf("view delivered without a change: %+v", got[n])
		}
	}
	http := []discoveryv1.EndpointPort{port("http", 8080)}
	a, b := slice("a", http, ep("10.0.0.1")), slice("b", http, ep("10.0.0.2"))
	b.ResourceVersion = "130"

	quiet() // nothing listed yet
	_ = w.Replace([]any{a}, "120")
	if v := deliver(); v.Revision != 120 || v.Epoch != 0 || len(v.Instances) != 1 || v.Source != SourceName {
		t.Fatalf("first view %+v", v)
	}
	_ = w.Add(b)
	w.UpdateResourceVersion("130")
	if v := deliver(); v.Revision != 130 || len(v.Instances) != 2 {
		t.Fatalf("after Add: %+v", v)
	}
	w.UpdateResourceVersion("140") // a bookmark: no change to deliver
	quiet()

	// A failed request: the last good view with Err, once per streak.
	ctx := context.Background()
	w.outcome(ctx, "list", errors.New("connection reset"))
	e := deliver()
	if e.Err == nil || e.Revision != 130 || len(e.Instances) != 2 {
		t.Fatalf("error view %+v", e)
	}
	w.outcome(ctx, "list", errors.New("connection reset again"))
	quiet()

	// The relist answers at a lower resourceVersion (etcd restored from a
	// backup) without b: a new epoch, so the view is newer than the last.
	w.outcome(ctx, "list", nil)
	_ = w.Replace([]any{a}, "50")
	v := deliver()
	if v.Err != nil || v.Revision != 50 || v.Epoch != 1 || len(v.Instances) != 1 || !got[1].OlderThan(v) {
		t.Fatalf("view after a relist that went backwards: %+v", v)
	}
	_ = w.Delete(a)
	if v := deliver(); v.Epoch != 1 || v.Instances == nil || len(v.Instances) != 0 {
		t.Fatalf("after the last slice's deletion: %+v, want an empty (not nil) list", v)
	}
}
