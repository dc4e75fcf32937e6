package etcd_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/etcd"
	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TestOneKeyForEveryEndpoint: an instance serving HTTP and gRPC writes one
// key under one lease whose value lists both endpoints in kratos's form
// (an endpoint without address gets the instance's); a watch by scheme
// dials each one's port and delivers both endpoints; Deregister removes
// the one key.
func TestOneKeyForEveryEndpoint(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	o, _ := testOptions(t, s, "multi", 1)
	o.SetEndpoints([]registry.Endpoint{{Scheme: "http", Address: "127.0.0.1", Port: 18081}, {Scheme: "grpc", Port: 19091}})
	r := newRegistrar(t, o)
	if err := syncTo(t, r, lifecycle.Ready, lifecycle.CauseChecks); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, etcd.ServicePrefix(etcd.DefaultPrefix, "multi"), clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Key) != r.Key() || clientv3.LeaseID(resp.Kvs[0].Lease) != r.Lease() {
		t.Fatalf("%d keys under the service (want the one key %s under lease %x): %v", len(resp.Kvs), r.Key(), int64(r.Lease()), resp.Kvs)
	}
	v, _, _, _ := getKey(t, c, r.Key())
	if want := []string{"http://127.0.0.1:18081", "grpc://127.0.0.1:19091"}; !slices.Equal(v.Endpoints, want) {
		t.Fatalf("endpoints %q, want %q", v.Endpoints, want)
	}
	if got := r.Options().Port; got != 18081 { // the ID and the primary endpoint are the first listener's
		t.Errorf("port %d, want 18081", got)
	}

	wantEPs := []registry.Endpoint{{Scheme: "http", Address: "127.0.0.1", Port: 18081}, {Scheme: "grpc", Address: "127.0.0.1", Port: 19091}}
	for scheme, port := range map[string]int{"": 18081, "grpc": 19091} {
		w := startWatch(t, c, "multi", etcd.WatchOptions{Scheme: scheme}, nil)
		v := w.next(t)
		if len(v.Instances) != 1 || v.Instances[0].Port != port || !slices.Equal(v.Instances[0].Endpoints, wantEPs) {
			t.Fatalf("scheme %q: view %+v, want one instance at port %d with endpoints %v", scheme, v.Instances, port, wantEPs)
		}
		if in, ok := v.Instances[0].ForScheme("grpc"); !ok || in.HostPort() != "127.0.0.1:19091" {
			t.Fatalf("ForScheme(grpc) = %v, %v", in.HostPort(), ok)
		}
	}

	if err := r.Deregister(ctx); err != nil {
		t.Fatal(err)
	}
	resp, err = c.Get(ctx, etcd.ServicePrefix(etcd.DefaultPrefix, "multi"), clientv3.WithPrefix())
	if err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("after Deregister: %v keys, %v", len(resp.Kvs), err)
	}
}
