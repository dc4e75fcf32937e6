package main

// The acceptance test of issue 20's "one registration per instance": the
// example serves HTTP and gRPC and registers in a real etcd and a real
// Consul agent, as a real child process sent a real SIGTERM.

import (
	"context"
	"encoding/json"
	"net"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/drainkit/drainkit/internal/childtest"
	"github.com/drainkit/drainkit/registry/consul/consultest"
	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
)

// TestOneRegistrationPerInstance: an HTTP+gRPC process writes exactly one
// etcd key, under one lease, whose kratos value lists both endpoints, and
// one Consul service with one TTL check whose address and port are the HTTP
// endpoint and whose scheme-keyed tagged addresses hold both; the drain
// removes both at its start, while the process still serves.
func TestOneRegistrationPerInstance(t *testing.T) {
	e, a := etcdtest.Start(t), consultest.Start(t)
	ec, cc := e.Client(t), a.Client(t)
	c := childtest.Start(t, binary.Path(t), append(append(childtest.Timings(), e.Env()...), a.Env()...), "--grpc-addr", "127.0.0.1:0")
	started := c.LogLines("started")[0]
	want := []string{"http://" + started["http"].(string), "grpc://" + started["grpc"].(string)}

	etcdKeys := func() []*mvccpb.KeyValue {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := ec.Get(ctx, "/microservices/grpcservice/", clientv3.WithPrefix())
		if err != nil {
			t.Fatal(err)
		}
		return resp.Kvs
	}
	services := func() map[string]*api.AgentService {
		svcs, err := cc.Agent().ServicesWithFilter(`Service == "grpcservice"`)
		if err != nil {
			t.Fatal(err)
		}
		return svcs
	}
	c.WaitFor(10*time.Second, "registered in etcd and Consul", func() bool {
		return len(etcdKeys()) > 0 && len(services()) > 0
	})

	kvs := etcdKeys()
	var v struct {
		Name      string   `json:"name"`
		Endpoints []string `json:"endpoints"`
	}
	if len(kvs) != 1 || json.Unmarshal(kvs[0].Value, &v) != nil || v.Name != "grpcservice" || !slices.Equal(v.Endpoints, want) {
		t.Fatalf("etcd: %d keys, first %s; want one key listing %q", len(kvs), kvs[0].Value, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if leases, err := ec.Leases(ctx); err != nil || len(leases.Leases) != 1 || leases.Leases[0].ID != clientv3.LeaseID(kvs[0].Lease) {
		t.Fatalf("etcd leases %+v (%v); want the key's one lease", leases, err)
	}
	svcs := services()
	if len(svcs) != 1 {
		t.Fatalf("Consul: %d services, want 1: %+v", len(svcs), svcs)
	}
	for _, s := range svcs {
		if s.TaggedAddresses["http"].Address != want[0] || s.TaggedAddresses["grpc"].Address != want[1] || "http://"+net.JoinHostPort(s.Address, strconv.Itoa(s.Port)) != want[0] {
			t.Fatalf("Consul service %+v: want address and port of %s, tagged addresses %q", s, want[0], want)
		}
		if checks, err := cc.Agent().ChecksWithFilter(`ServiceID == "` + s.ID + `"`); err != nil || len(checks) != 1 {
			t.Fatalf("Consul checks %v (%v): want the one TTL check", checks, err)
		}
	}

	c.Signal(syscall.SIGTERM)
	c.WaitFor(childtest.PropagationMin, "both registrations gone after SIGTERM, within propagation.min", func() bool {
		return len(etcdKeys()) == 0 && len(services()) == 0
	})
	if code, _ := c.AdminDo("GET", "/livez", nil); code != 200 {
		t.Errorf("GET /livez %d right after deregistration; want the process still serving", code)
	}
	dereg, _, _ := c.CleanDrain(childtest.Budget + 5*time.Second)
	if dereg.At > time.Second {
		t.Errorf("deregistered at %s after the drain's start; want at its start", dereg.At)
	}
}
