package kubedrill

import (
	"encoding/json"
	"testing"
	"time"
)

func podEvent(t *testing.T, typ, name, ip string, deleting, terminated bool) watchEvent {
	t.Helper()
	o := map[string]any{
		"metadata": map[string]any{"name": name, "labels": map[string]string{labelRole: "server", labelStrategy: "drainkit"}},
		"status":   map[string]any{"podIP": ip},
	}
	if deleting {
		o["metadata"].(map[string]any)["deletionTimestamp"] = "2026-12-05T08:00:00Z"
	}
	if terminated {
		o["status"].(map[string]any)["containerStatuses"] = []any{map[string]any{"state": map[string]any{"terminated": map[string]any{"exitCode": 0}}}}
	}
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	return watchEvent{Type: typ, Object: b}
}

// endpoint is one endpoint of a slice: pod name and conditions (nil: left
// out, as the API may).
type endpoint struct {
	pod                         string
	ready, serving, terminating *bool
}

func sliceEvent(t *testing.T, typ, name string, eps ...endpoint) watchEvent {
	t.Helper()
	var list []any
	for _, e := range eps {
		list = append(list, map[string]any{
			"addresses":  []string{"10.200.1.9"},
			"conditions": map[string]any{"ready": e.ready, "serving": e.serving, "terminating": e.terminating},
			"targetRef":  map[string]any{"kind": "Pod", "name": e.pod},
		})
	}
	b, err := json.Marshal(map[string]any{"metadata": map[string]any{"name": name}, "endpoints": list})
	if err != nil {
		t.Fatal(err)
	}
	return watchEvent{Type: typ, Object: b}
}

func ptr(b bool) *bool { return &b }

// The tracker turns the watches into each old pod's instants: deletion,
// the slice's conditions once the endpoint had been ready, the endpoint
// leaving every slice, the rules without its IP, the exit.
func TestTrackerInstants(t *testing.T) {
	tr := newTracker()
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tr.onPod(at(0), podEvent(t, "ADDED", "old", "10.200.1.5", false, false))
	// A new pod, not ready yet: no ready=false instant for it.
	tr.onSlice(at(0), sliceEvent(t, "ADDED", "s1",
		endpoint{pod: "old"}, endpoint{pod: "new", ready: ptr(false), serving: ptr(false)}))
	tr.onRules(at(50), "ns", map[string]map[string]bool{"ns/drill-drainkit:http": {"10.200.1.5": true}})
	tr.onPod(at(100), podEvent(t, "MODIFIED", "old", "10.200.1.5", true, false))
	tr.onSlice(at(150), sliceEvent(t, "MODIFIED", "s1",
		endpoint{pod: "old", ready: ptr(false), serving: ptr(true), terminating: ptr(true)}, endpoint{pod: "new"}))
	tr.onRules(at(300), "ns", map[string]map[string]bool{"ns/drill-drainkit:http": {}})
	tr.onLog("old", logSIGTERM, at(400))
	tr.onLog("old", logDone, at(580))
	tr.onSlice(at(500), sliceEvent(t, "MODIFIED", "s1",
		endpoint{pod: "old", ready: ptr(false), serving: ptr(false), terminating: ptr(true)}, endpoint{pod: "new"}))
	// The endpoint moves to another slice before it goes: not removed yet.
	tr.onSlice(at(550), sliceEvent(t, "ADDED", "s2", endpoint{pod: "old", ready: ptr(false), serving: ptr(false), terminating: ptr(true)}))
	tr.onSlice(at(560), sliceEvent(t, "MODIFIED", "s1", endpoint{pod: "new"}))
	tr.onPod(at(600), podEvent(t, "MODIFIED", "old", "10.200.1.5", true, true))
	tr.onSlice(at(700), sliceEvent(t, "DELETED", "s2"))
	tr.onPod(at(800), podEvent(t, "DELETED", "old", "10.200.1.5", true, true))

	p := tr.snapshot()["old"]
	for name, c := range map[string]struct {
		got  time.Time
		want int
	}{
		"deleted": {p.deleted, 100}, "ready=false": {p.notReady, 150}, "terminating": {p.terminating, 150},
		"rules gone": {p.rulesGone, 300}, "SIGTERM": {p.sigterm, 400}, "serving=false": {p.notServing, 500},
		"done": {p.done, 580}, "exited": {p.exited, 600}, "removed": {p.removed, 700},
	} {
		if !c.got.Equal(at(c.want)) {
			t.Errorf("%s at %v, want %d ms", name, c.got.Sub(t0), c.want)
		}
	}
	if n := tr.snapshot()["new"]; !n.notReady.IsZero() || !n.notServing.IsZero() {
		t.Errorf("the new pod, never ready before, got ready=false at %v and serving=false at %v", n.notReady, n.notServing)
	}
}
