package nacos_test

import (
	"context"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/nacos"
)

// TestIPv6ServerAddr: a server_addr of an IPv6 literal, [::1]:P, reaches
// the server's HTTP port and its gRPC port P+1000: the instance is
// registered (through gRPC), a Watch through the same address lists it, and
// the deregistration removes it. nacos-sdk-go appends ":port" to the host
// it is given, so it was handed "::1" and dialled "::1:P+1000": never
// connected, nothing registered, nothing said.
func TestIPv6ServerAddr(t *testing.T) {
	addr := net.JoinHostPort("::1", strconv.Itoa(srv.Port))
	for _, a := range []string{addr, net.JoinHostPort("::1", strconv.Itoa(srv.Port+1000))} {
		c, err := net.DialTimeout("tcp", a, 2*time.Second)
		if err != nil {
			t.Skipf("the Nacos server does not answer on IPv6 loopback (%v)", err)
		}
		c.Close()
	}
	const svc, port = "ipv6-svc", 18701
	o := testOptions(t, svc, port)
	o.Addrs = []string{addr}
	r := newRegistrar(t, o)
	sync(t, r, lifecycle.Ready, lifecycle.CauseChecks)
	waitList(t, consumerList, svc, port, "registered through "+addr, func(in instance, ok bool) bool { return ok && in.Healthy })

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	views := make(chan registry.View, 16)
	done := make(chan error, 1)
	go func() {
		done <- nacos.Watch(ctx, svc, nacos.WatchOptions{Server: nacos.Server{Addrs: []string{addr}},
			ReadInterval: 200 * time.Millisecond, SDKDir: t.TempDir()}, func(v registry.View) { views <- v })
	}()
	deadline := time.After(10 * time.Second)
	for listed := false; !listed; {
		select {
		case v := <-views:
			listed = v.Err == nil && len(v.Instances) == 1 && v.Instances[0].Port == port
		case <-deadline:
			t.Fatalf("Watch through %s did not list the instance within 10s", addr)
		}
	}
	cancel()
	<-done

	dctx, dcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer dcancel()
	if err := r.Deregister(dctx); err != nil {
		t.Fatalf("Deregister through %s: %v", addr, err)
	}
	if err := r.Confirm(dctx); err != nil {
		t.Fatalf("Confirm through %s: %v", addr, err)
	}
}
