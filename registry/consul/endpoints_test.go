package consul

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/consul/consultest"
	"github.com/hashicorp/consul/api"
)

// TestOneServiceForEveryEndpoint: an instance serving HTTP and gRPC
// registers one service with one TTL check: the first endpoint as its
// address and port, every endpoint as a tagged address keyed by its scheme
// holding its URL (kratos's encoding); a watch delivers one instance with
// both endpoints, and Deregister removes it. With no address, the tagged
// addresses carry no host and the watch fills in the node's.
func TestOneServiceForEveryEndpoint(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	for _, addr := range []string{"127.0.0.1", ""} {
		service := "multi" + fmt.Sprint(len(addr))
		o, _ := testOptions(t, a, service, 1)
		o.Address = ""
		o.SetEndpoints([]registry.Endpoint{{Scheme: "http", Address: addr, Port: 18082}, {Scheme: "grpc", Port: 19092}})
		r := newRegistrar(t, o)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := r.Sync(ctx, tr(lifecycle.Ready, lifecycle.CauseChecks)); err != nil {
			t.Fatal(err)
		}
		svcs, err := c.Agent().ServicesWithFilter(fmt.Sprintf("Service == %q", service))
		if err != nil {
			t.Fatal(err)
		}
		svc := svcs[r.ID()]
		if len(svcs) != 1 || svc == nil || svc.Address != addr || svc.Port != 18082 {
			t.Fatalf("address %q: services %+v, want one at %q port 18082", addr, svcs, addr)
		}
		wantTagged := map[string]api.ServiceAddress{
			"http": {Address: "http://" + addr + ":18082", Port: 18082}, "grpc": {Address: "grpc://" + addr + ":19092", Port: 19092}}
		for k, v := range wantTagged {
			if svc.TaggedAddresses[k] != v {
				t.Errorf("address %q: tagged address %s = %+v, want %+v (all: %+v)", addr, k, svc.TaggedAddresses[k], v, svc.TaggedAddresses)
			}
		}
		if checks, _ := c.Agent().ChecksWithFilter(fmt.Sprintf("ServiceID == %q", r.ID())); len(checks) != 1 {
			t.Errorf("address %q: %d checks, want the one TTL check", addr, len(checks))
		}

		w := NewWatcher(c, service, WatchOptions{})
		v, err := w.WaitFor(ctx, func(v registry.View) bool { return len(v.Instances) == 1 })
		w.Close()
		if err != nil {
			t.Fatalf("address %q: %v, view %+v", addr, err, v)
		}
		host := v.Instances[0].Address // the node's address when none was registered
		want := []registry.Endpoint{{Scheme: "grpc", Address: host, Port: 19092}, {Scheme: "http", Address: host, Port: 18082}}
		if (addr != "" && host != addr) || host == "" || !slices.Equal(v.Instances[0].Endpoints, want) {
			t.Fatalf("address %q: instance %+v, want endpoints %v", addr, v.Instances[0], want)
		}
		if in, ok := v.Instances[0].ForScheme("grpc"); !ok || in.Port != 19092 {
			t.Errorf("ForScheme(grpc) = %+v, %v", in, ok)
		}
		if err := r.Deregister(ctx); err != nil {
			t.Fatal(err)
		}
		if svcs, err := c.Agent().ServicesWithFilter(fmt.Sprintf("Service == %q", service)); err != nil || len(svcs) != 0 {
			t.Fatalf("after Deregister: %v, %v", svcs, err)
		}
	}
}

// TestSingleEndpointUnchanged: without Scheme or Extra the registration
// has no tagged address, as before.
func TestSingleEndpointUnchanged(t *testing.T) {
	o := DefaultOptions("one", 8080)
	if reg := (&Registrar{opts: o}).registration(api.HealthPassing, time.Now()); reg.TaggedAddresses != nil {
		t.Fatalf("tagged addresses %v", reg.TaggedAddresses)
	}
	o.Extra = []registry.Endpoint{{Scheme: "http", Port: 9090}}
	var re *budget.RangeError
	if err := o.Validate(); err == nil || !errors.As(err, &re) || re.Key != "Options.Extra" {
		t.Fatalf("Extra with the primary's scheme: %v, want a RangeError for Options.Extra", err)
	}
}
