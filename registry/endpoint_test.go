package registry_test

import (
	"slices"
	"testing"

	"github.com/drainkit/drainkit/registry"
)

// TestEndpointsAt: registry.address replaces every endpoint's address (a
// listener bound to 127.0.0.1 or to nothing in particular), without
// touching the caller's slice; an empty address changes nothing.
func TestEndpointsAt(t *testing.T) {
	eps := []registry.Endpoint{{Scheme: "http", Address: "127.0.0.1", Port: 8080}, {Scheme: "grpc", Port: 9090}}
	got := registry.EndpointsAt(eps, "10.1.2.3")
	want := []registry.Endpoint{{Scheme: "http", Address: "10.1.2.3", Port: 8080}, {Scheme: "grpc", Address: "10.1.2.3", Port: 9090}}
	if !slices.Equal(got, want) || eps[0].Address != "127.0.0.1" || eps[1].Address != "" {
		t.Errorf("EndpointsAt: %v (input now %v), want %v", got, eps, want)
	}
	if got := registry.EndpointsAt(eps, ""); !slices.Equal(got, eps) {
		t.Errorf("EndpointsAt with no address: %v", got)
	}
}
