package kubernetes

import (
	"fmt"
	"slices"
	"testing"

	"github.com/drainkit/drainkit/registry"
	"go.uber.org/goleak"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// The merge's rules on slices as the API server stores them; the cluster
// tests (internal/clustertest) run the same rules on a real one.

type epOpt func(*discoveryv1.Endpoint)

func ready(b bool) epOpt   { return func(e *discoveryv1.Endpoint) { e.Conditions.Ready = &b } }
func serving(b bool) epOpt { return func(e *discoveryv1.Endpoint) { e.Conditions.Serving = &b } }
func terminating(b bool) epOpt {
	return func(e *discoveryv1.Endpoint) { e.Conditions.Terminating = &b }
}
func zone(z string) epOpt { return func(e *discoveryv1.Endpoint) { e.Zone = &z } }
func pod(name string) epOpt {
	return func(e *discoveryv1.Endpoint) { e.TargetRef = &corev1.ObjectReference{Kind: "Pod", Name: name} }
}
func hints(zones ...string) epOpt {
	return func(e *discoveryv1.Endpoint) {
		e.Hints = &discoveryv1.EndpointHints{}
		for _, z := range zones {
			e.Hints.ForZones = append(e.Hints.ForZones, discoveryv1.ForZone{Name: z})
		}
	}
}

func ep(addr string, opts ...epOpt) discoveryv1.Endpoint {
	e := discoveryv1.Endpoint{Addresses: []string{addr}}
	for _, o := range opts {
		o(&e)
	}
	return e
}

func port(name string, n int32) discoveryv1.EndpointPort {
	return discoveryv1.EndpointPort{Name: &name, Port: &n}
}

func slice(name string, ports []discoveryv1.EndpointPort, eps ...discoveryv1.Endpoint) *discoveryv1.EndpointSlice {
	return &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: name}, AddressType: discoveryv1.AddressTypeIPv4,
		Ports: ports, Endpoints: eps}
}

func ids(ins []registry.Instance) []string {
	out := []string{}
	for _, in := range ins {
		out = append(out, in.ID)
	}
	return out
}

func TestInstancesMergeAndDedupe(t *testing.T) {
	http := []discoveryv1.EndpointPort{port("http", 8080)}
	got := instances([]*discoveryv1.EndpointSlice{
		slice("b", http, ep("10.0.0.2"), ep("10.0.0.3")),
		slice("a", http, ep("10.0.0.1"), ep("10.0.0.2")), // .2 in both: one instance
	}, WatchOptions{})
	if want := []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"}; !slices.Equal(ids(got), want) {
		t.Fatalf("ids = %v, want %v", ids(got), want)
	}
	in := got[0]
	if in.Address != "10.0.0.1" || in.Port != 8080 || !slices.Equal(in.Endpoints, []registry.Endpoint{{Scheme: "http", Address: "10.0.0.1", Port: 8080}}) {
		t.Fatalf("instance = %+v", in)
	}
}

// KEP-1669: ready endpoints only; a terminating one, serving or not, gets
// nothing while one is ready; with none ready, the serving terminating
// ones, marked.
func TestInstancesConditions(t *testing.T) {
	http := []discoveryv1.EndpointPort{port("http", 8080)}
	cases := []struct {
		name string
		eps  []discoveryv1.Endpoint
		want []string
		term bool
	}{
		{"nil conditions are ready", []discoveryv1.Endpoint{ep("10.0.0.1")}, []string{"10.0.0.1"}, false},
		{"not ready left out", []discoveryv1.Endpoint{ep("10.0.0.1"), ep("10.0.0.2", ready(false), serving(false))}, []string{"10.0.0.1"}, false},
		{"terminating serving left out while one is ready", []discoveryv1.Endpoint{
			ep("10.0.0.1"), ep("10.0.0.2", ready(false), serving(true), terminating(true))}, []string{"10.0.0.1"}, false},
		{"fallback to serving terminating", []discoveryv1.Endpoint{
			ep("10.0.0.1", ready(false), serving(true), terminating(true)),
			ep("10.0.0.2", ready(false), serving(false), terminating(true)),
			ep("10.0.0.3", ready(false), serving(false))}, []string{"10.0.0.1"}, true},
		{"nothing serving", []discoveryv1.Endpoint{ep("10.0.0.2", ready(false), serving(false), terminating(true))}, []string{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := instances([]*discoveryv1.EndpointSlice{slice("a", http, c.eps...)}, WatchOptions{})
			if !slices.Equal(ids(got), c.want) {
				t.Fatalf("ids = %v, want %v", ids(got), c.want)
			}
			for _, in := range got {
				if (in.Meta[MetaTerminating] == "true") != c.term {
					t.Fatalf("%s: meta %v, want terminating mark %v", in.ID, in.Meta, c.term)
				}
			}
		})
	}
}

// A pod IP reused while the old pod terminates: the running pod's copy
// wins whatever the slice order.
func TestInstancesDuplicatePrefersNotTerminating(t *testing.T) {
	http := []discoveryv1.EndpointPort{port("http", 8080)}
	old := ep("10.0.0.1", ready(false), serving(true), terminating(true), pod("old"))
	cur := ep("10.0.0.1", pod("new"))
	for _, order := range [][2]discoveryv1.Endpoint{{old, cur}, {cur, old}} {
		got := instances([]*discoveryv1.EndpointSlice{slice("a", http, order[0]), slice("b", http, order[1])}, WatchOptions{})
		if len(got) != 1 || got[0].Meta[MetaPod] != "new" || got[0].Meta[MetaTerminating] != "" {
			t.Fatalf("got %+v, want the running pod alone", got)
		}
	}
}

func TestInstancesPorts(t *testing.T) {
	two := []discoveryv1.EndpointPort{port("http", 8080), port("grpc", 9090)}
	got := instances([]*discoveryv1.EndpointSlice{slice("a", two, ep("10.0.0.1"))}, WatchOptions{})
	want := []registry.Endpoint{{Scheme: "grpc", Address: "10.0.0.1", Port: 9090}, {Scheme: "http", Address: "10.0.0.1", Port: 8080}}
	if len(got) != 1 || !slices.Equal(got[0].Endpoints, want) || got[0].Port != 9090 {
		t.Fatalf("got %+v, want endpoints %v at the first by name", got, want)
	}
	if g, ok := got[0].ForScheme("http"); !ok || g.Port != 8080 {
		t.Fatalf("ForScheme(http) = %+v %v", g, ok)
	}
	got = instances([]*discoveryv1.EndpointSlice{slice("a", two, ep("10.0.0.1"))}, WatchOptions{PortName: "http"})
	if len(got) != 1 || got[0].Port != 8080 {
		t.Fatalf("PortName http: %+v", got)
	}
	if got = instances([]*discoveryv1.EndpointSlice{slice("a", two, ep("10.0.0.1"))}, WatchOptions{PortName: "admin"}); len(got) != 0 {
		t.Fatalf("PortName admin: %+v, want none", got)
	}
	// An unnamed port (a single-port Service) serves every protocol; UDP
	// and portless entries are not dialled.
	udp := corev1.ProtocolUDP
	dns := port("dns", 53)
	dns.Protocol = &udp
	got = instances([]*discoveryv1.EndpointSlice{slice("a", []discoveryv1.EndpointPort{port("", 8080), dns}, ep("10.0.0.1"))}, WatchOptions{})
	if len(got) != 1 || got[0].Port != 8080 || got[0].Endpoints != nil {
		t.Fatalf("unnamed port: %+v", got)
	}
	if got = instances([]*discoveryv1.EndpointSlice{slice("a", nil, ep("10.0.0.1"))}, WatchOptions{}); len(got) != 0 {
		t.Fatalf("no ports: %+v, want none", got)
	}
}

func TestInstancesAddressTypes(t *testing.T) {
	http := []discoveryv1.EndpointPort{port("http", 8080)}
	v6 := slice("v6", http, ep("fd00:0:0:0::1"))
	v6.AddressType = discoveryv1.AddressTypeIPv6
	fqdn := slice("fqdn", http, ep("pod.example"))
	fqdn.AddressType = discoveryv1.AddressTypeFQDN
	all := []*discoveryv1.EndpointSlice{slice("v4", http, ep("10.0.0.1")), v6, fqdn}
	if got, want := ids(instances(all, WatchOptions{})), []string{"10.0.0.1", "fd00::1"}; !slices.Equal(got, want) {
		t.Fatalf("both families: %v, want %v", got, want)
	}
	if got, want := ids(instances(all, WatchOptions{AddressType: discoveryv1.AddressTypeIPv6})), []string{"fd00::1"}; !slices.Equal(got, want) {
		t.Fatalf("IPv6: %v, want %v", got, want)
	}
}

func TestInstancesZonesAndHints(t *testing.T) {
	http := []discoveryv1.EndpointPort{port("http", 8080)}
	zoneOf := func(ins []registry.Instance) string {
		s := ""
		for _, in := range ins {
			s += fmt.Sprintf("%s=%s/%s ", in.ID, in.Meta[MetaZone], in.Meta[MetaTopologyZone])
		}
		return s
	}
	// Every ready endpoint hinted: the hint is the zone consumers use.
	hinted := []*discoveryv1.EndpointSlice{slice("a", http,
		ep("10.0.0.1", zone("a"), hints("a")),
		ep("10.0.0.2", zone("a"), hints("b")),
		ep("10.0.0.3", zone("b"), hints("b", "c")),
		ep("10.0.0.4", zone("c"), ready(false)))} // not ready: its missing hint does not count
	if got, want := zoneOf(instances(hinted, WatchOptions{})), "10.0.0.1=a/a 10.0.0.2=b/a 10.0.0.3=b/b "; got != want {
		t.Fatalf("hints: %q, want %q", got, want)
	}
	if got, want := zoneOf(instances(hinted, WatchOptions{Zone: "c"})), "10.0.0.1=a/a 10.0.0.2=b/a 10.0.0.3=c/b "; got != want {
		t.Fatalf("hints for a consumer in c: %q, want %q", got, want)
	}
	// One ready endpoint without a hint: the hints do not apply.
	partial := []*discoveryv1.EndpointSlice{slice("a", http, ep("10.0.0.1", zone("a"), hints("b")), ep("10.0.0.2", zone("b")))}
	if got, want := zoneOf(instances(partial, WatchOptions{})), "10.0.0.1=a/a 10.0.0.2=b/b "; got != want {
		t.Fatalf("partial hints: %q, want %q", got, want)
	}
}
