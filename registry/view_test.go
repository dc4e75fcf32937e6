package registry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/drainkit/drainkit/registry"
)

func TestInstanceAndView(t *testing.T) {
	at := time.Date(2026, 12, 1, 6, 0, 0, 123456789, time.UTC)
	in := registry.Instance{ID: "a", Address: "::1", Port: 8080,
		Meta: map[string]string{registry.MetaReadyAt: at.Format(time.RFC3339Nano)}}
	if got := in.HostPort(); got != "[::1]:8080" {
		t.Fatalf("HostPort = %q", got)
	}
	if got, ok := in.ReadyAt(); !ok || !got.Equal(at) {
		t.Fatalf("ReadyAt = %v, %t; want %v", got, ok, at)
	}
	if _, ok := (registry.Instance{Meta: map[string]string{registry.MetaReadyAt: "yesterday"}}).ReadyAt(); ok {
		t.Fatal("ReadyAt parsed a bad value")
	}
	if _, ok := (registry.Instance{}).ReadyAt(); ok {
		t.Fatal("ReadyAt without meta reported ok")
	}

	var v registry.View
	if v.Age(at) != 0 || v.Has("a") {
		t.Fatalf("zero view: age %s, has a %t", v.Age(at), v.Has("a"))
	}
	v = registry.View{Instances: []registry.Instance{in}, Received: at}
	if v.Age(at.Add(3*time.Second)) != 3*time.Second || !v.Has("a") || v.Has("b") {
		t.Fatalf("view %+v: age or Has wrong", v)
	}
}

func TestSourceFunc(t *testing.T) {
	want := errors.New("unusable")
	var src registry.Source = registry.SourceFunc(func(ctx context.Context, fn func(registry.View)) error {
		fn(registry.View{Service: "api", Source: "static", Instances: []registry.Instance{}})
		return want
	})
	var got []registry.View
	if err := src.Watch(context.Background(), func(v registry.View) { got = append(got, v) }); !errors.Is(err, want) {
		t.Fatalf("Watch = %v", err)
	}
	if len(got) != 1 || got[0].Source != "static" {
		t.Fatalf("views %+v", got)
	}
}

// TestOlderThan: the order of one Watch call's views (Source's contract):
// a higher Epoch is newer whatever the revisions; within an epoch, Revision,
// or Received when a revision is 0.
func TestOlderThan(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	v := func(epoch, rev uint64, at time.Duration) registry.View {
		return registry.View{Epoch: epoch, Revision: rev, Received: t0.Add(at)}
	}
	for _, c := range []struct {
		name  string
		a, b  registry.View
		older bool
	}{
		{"lower revision", v(0, 5, 2), v(0, 9, 1), true},
		{"higher revision", v(0, 9, 1), v(0, 5, 2), false},
		{"same revision", v(0, 5, 1), v(0, 5, 2), false},
		{"new epoch, lower revision", v(1, 3, 2), v(0, 900, 1), false},
		{"old epoch, higher revision", v(0, 900, 3), v(1, 3, 2), true},
		{"revision 0: by Received", v(0, 0, 1), v(0, 7, 2), true},
		{"revision 0: later", v(0, 0, 3), v(0, 7, 2), false},
		{"revision 0, no Received", registry.View{}, v(0, 7, 2), false},
	} {
		if got := c.a.OlderThan(c.b); got != c.older {
			t.Errorf("%s: OlderThan = %t, want %t", c.name, got, c.older)
		}
	}
}
