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
