package drill

import (
	"context"
	"slices"
	"testing"
	"time"
)

// The naive gRPC consumer reaches the instances through its
// connection-level balancer: each of its ClientConns connects on its first
// call, the balancer handing the connections round robin over the list. A
// ClientConn whose connection went to a listed instance that no longer
// listens fails its calls (reset: grpc-go's pick_first, no retry policy);
// the others' calls succeed, and their Attempt names the instance behind
// the balancer, not the balancer.
func TestNaiveGRPCThroughItsBalancer(t *testing.T) {
	live := serveTest(t, slowService{})
	closed := closedAddr(t)
	src := &staticSource{}
	eps := []Endpoint{{Replica: 1, Addr: "127.0.0.1:1", GRPCAddr: closed}, {Replica: 2, Addr: "127.0.0.1:2", GRPCAddr: live}}
	src.v.Store(&eps)
	c, err := newNaiveGRPC(ClientConfig{ID: 1, Service: "svc", Endpoints: src, Timeout: 5 * time.Second, Dial: drillDialer}, grpcCall{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.Listed(); !slices.Equal(got, []string{closed, live}) {
		t.Errorf("Listed: %v, want %v", got, []string{closed, live})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var outcomes []Outcome
	for i := range naiveGRPCConns {
		att := c.Do(ctx, Request{})
		outcomes = append(outcomes, Classify(att.Status, att.Err))
		if att.Err == nil && att.Addr != live {
			t.Errorf("call %d succeeded at %q, want the instance %s", i, att.Addr, live)
		}
	}
	if want := []Outcome{Reset, OK, Reset, OK}; !slices.Equal(outcomes, want) {
		t.Errorf("outcomes of one call per ClientConn: %v, want %v", outcomes, want)
	}
}
