package drill

import (
	"context"
	"testing"
	"time"

	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/consul/consultest"
	"github.com/hashicorp/consul/api"
)

// TestConsulDiscoveryDeliversViews: against a real agent, the Consul
// discovery delivers registry views a drainkit consumer can be fed from
// (Source "consul", the index as revision, the passing instance) and maps
// the instance's address to the drill's replica.
func TestConsulDiscoveryDeliversViews(t *testing.T) {
	agent := consultest.Start(t)
	client := agent.Client(t)
	const service = "drill-view-test"
	err := client.Agent().ServiceRegister(&api.AgentServiceRegistration{
		ID: "drill-view-test-1", Name: service, Address: "127.0.0.1", Port: 20011,
		Check: &api.AgentServiceCheck{TTL: "30s", Status: api.HealthPassing},
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewConsulDiscovery(agent.HTTPAddr, service)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	d.Add(&Replica{ID: 4, HTTPAddr: "127.0.0.1:20011"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := d.WaitListed(ctx, 4); err != nil {
		t.Fatal(err)
	}
	views := make(chan registry.View, 8)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Watch(wctx, func(v registry.View) { views <- v }) }()
	v := <-views
	if v.Source != "consul" || v.Service != service || v.Revision == 0 || v.Received.IsZero() ||
		len(v.Instances) != 1 || v.Instances[0].HostPort() != "127.0.0.1:20011" {
		t.Fatalf("view %+v", v)
	}
	stop()
	if err := <-done; err != context.Canceled {
		t.Fatalf("Watch returned %v", err)
	}
}
