package drill

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/consumer/grpcresolver"
	"github.com/drainkit/drainkit/registry"
)

// grpcEndpointScheme is the endpoint the gRPC consumers call among an
// instance's endpoints (DESIGN.md section 6f).
const grpcEndpointScheme = "grpc"

// naiveGRPCConns is how many grpc.ClientConns one naive gRPC consumer
// spreads its calls over, as several client pods of one service would.
const naiveGRPCConns = 4

// naiveGRPC is a gRPC consumer as a plain user in Kubernetes writes one
// (ConsumerNaive with the gRPC protocols): grpc.ClientConns to a Service
// name, that is to one address, behind which a connection-level balancer
// (kube-proxy) picks an instance per TCP connection. Here the balancer is
// a connBalancer over the same discovery list, as late, as the HTTP naive
// consumer's (ClientConfig.Endpoints, behind its cache). Each ClientConn
// has grpc-go's defaults: pick_first over that one address, no retry
// policy, no health checking, fail-fast calls (no wait-for-ready); grpc-go
// still retries transparently what never left the client. After a GOAWAY
// a ClientConn reconnects through the balancer, which may hand the new
// connection to the instance that just stopped listening: the connection
// is reset, pick_first goes TRANSIENT_FAILURE and the ClientConn's calls
// fail UNAVAILABLE until a reconnect, after grpc-go's backoff (1 s and
// more), lands on a live instance. Calls go round robin over
// naiveGRPCConns ClientConns.
type naiveGRPC struct {
	call grpcCall
	src  Source
	lb   *connBalancer
	ccs  []*grpc.ClientConn
	next atomic.Uint64
}

// newNaiveGRPC implements NewClientFunc for ConsumerNaive over gRPC.
func newNaiveGRPC(c ClientConfig, call grpcCall) (Client, error) {
	src := c.Endpoints
	lb, err := newConnBalancer(func() []string { return endpointGRPCAddrs(src.Endpoints()) })
	if err != nil {
		return nil, err
	}
	call.route = lb.Backend
	n := &naiveGRPC{call: call, src: src, lb: lb}
	for range naiveGRPCConns {
		cc, err := grpc.NewClient("passthrough:///"+lb.Addr(), grpcDialOptions(c.Dial)...)
		if err != nil {
			n.Close()
			return nil, err
		}
		n.ccs = append(n.ccs, cc)
	}
	return n, nil
}

// Do implements Client: one call on the next ClientConn.
func (n *naiveGRPC) Do(ctx context.Context, _ Request) Attempt {
	cc := n.ccs[(n.next.Add(1)-1)%uint64(len(n.ccs))]
	return n.call.do(ctx, cc)
}

// Listed implements Client: the gRPC addresses of the list the balancer
// picks the next connection's instance from.
func (n *naiveGRPC) Listed() []string { return endpointGRPCAddrs(peekEndpoints(n.src)) }

// Stats implements Client: it ejects nothing.
func (n *naiveGRPC) Stats() ClientStats { return ClientStats{} }

// Close implements Client: it closes the ClientConns, then the balancer.
func (n *naiveGRPC) Close() {
	for _, cc := range n.ccs {
		_ = cc.Close()
	}
	n.lb.Close()
}

// endpointGRPCAddrs returns the gRPC listeners' addresses of eps (those
// that serve gRPC).
func endpointGRPCAddrs(eps []Endpoint) []string {
	out := make([]string, 0, len(eps))
	for _, ep := range eps {
		if ep.GRPCAddr != "" {
			out = append(out, ep.GRPCAddr)
		}
	}
	return out
}

// drainkitGRPC is drainkit's gRPC consumer (ConsumerDrainkit with the gRPC
// protocols): a consumer.Watcher over the drill's views feeding
// consumer/grpcresolver, with its default service config (round_robin,
// client-side health checking, so an instance leaves the rotation when its
// health goes NOT_SERVING at the drain's start) and its retry policy for
// the TestService's methods, which are idempotent. Its outlier ejection
// needs grpcresolver/outlierdetection (grpc-go's xds), which the drill does
// not link: it ejects nothing of its own.
type drainkitGRPC struct {
	call grpcCall
	w    *consumer.Watcher
	cc   *grpc.ClientConn
}

// newDrainkitGRPC implements NewClientFunc for ConsumerDrainkit over gRPC.
func newDrainkitGRPC(c ClientConfig, call grpcCall) (Client, error) {
	logger := slog.New(slog.DiscardHandler) // the drill reports the outcomes itself
	w, err := consumer.NewWatcher(consumer.WatcherOptions{Source: c.Views, Service: c.Service, Logger: logger})
	if err != nil {
		return nil, err
	}
	b := grpcresolver.FromWatcher("", w)
	cc, err := grpc.NewClient(b.Scheme()+":///"+c.Service, append(grpcDialOptions(c.Dial), grpcresolver.DialOptions(b, grpcIdempotentScope)...)...)
	if err != nil {
		w.Close()
		return nil, err
	}
	cc.Connect()
	return &drainkitGRPC{call: call, w: w, cc: cc}, nil
}

// Do implements Client.
func (d *drainkitGRPC) Do(ctx context.Context, _ Request) Attempt {
	age := d.w.View().Age(time.Now())
	att := d.call.do(ctx, d.cc)
	att.ViewAge = age
	return att
}

// Listed implements Client: the gRPC endpoints of the watcher's view.
func (d *drainkitGRPC) Listed() []string { return grpcAddrs(d.w.View()) }

// ViewListed implements viewLister.
func (d *drainkitGRPC) ViewListed() ([]string, uint64) {
	v := d.w.View()
	return grpcAddrs(v), v.Revision
}

// Stats implements Client: grpc-go's picks and health checks eject
// nothing the drill can count.
func (d *drainkitGRPC) Stats() ClientStats { return ClientStats{} }

// Close implements Client.
func (d *drainkitGRPC) Close() {
	_ = d.cc.Close()
	d.w.Close()
}

// grpcAddrs returns the host:port of every instance's gRPC endpoint in v,
// as grpcresolver picks them (an instance listing no endpoints at its
// address and port).
func grpcAddrs(v registry.View) []string {
	out := make([]string, 0, len(v.Instances))
	for _, in := range v.Instances {
		if in, ok := in.ForScheme(grpcEndpointScheme); ok {
			out = append(out, in.HostPort())
		}
	}
	return out
}
