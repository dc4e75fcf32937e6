package drill

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/consumer/grpcresolver"
	"github.com/drainkit/drainkit/registry"
)

// grpcEndpointScheme is the endpoint the gRPC consumers call among an
// instance's endpoints (DESIGN.md section 6f).
const grpcEndpointScheme = "grpc"

// naiveGRPC is a gRPC consumer as a plain user writes one (ConsumerNaive
// with the gRPC protocols): one grpc.ClientConn whose addresses are the
// discovery's answers as they come (grpc-go's manual resolver), round_robin,
// no retry policy, no health checking, no outlier ejection. grpc-go still
// retries transparently what never left the client.
type naiveGRPC struct {
	call   grpcCall
	cc     *grpc.ClientConn
	r      *manual.Resolver
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	addrs []string // the addresses last handed to the resolver
}

// newNaiveGRPC implements NewClientFunc for ConsumerNaive over gRPC.
func newNaiveGRPC(c ClientConfig, call grpcCall) (Client, error) {
	r := manual.NewBuilderWithScheme("drill-naive")
	cc, err := grpc.NewClient(r.Scheme()+":///"+c.Service, append(grpcDialOptions(c.Dial),
		grpc.WithResolvers(r),
		grpc.WithDefaultServiceConfig(`{"loadBalancingConfig":[{"round_robin":{}}]}`))...)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &naiveGRPC{call: call, cc: cc, r: r, cancel: cancel, done: make(chan struct{})}
	// The manual resolver takes its first state once the ClientConn uses
	// it: connect now, so that UpdateState below always has a ClientConn.
	cc.Connect()
	go func() {
		defer close(n.done)
		_ = c.Views.Watch(ctx, n.update)
	}()
	return n, nil
}

// update hands a discovery answer's gRPC endpoints to the ClientConn.
func (n *naiveGRPC) update(v registry.View) {
	if v.Err != nil {
		return // keep the last list, as on a failed poll
	}
	addrs := grpcAddrs(v)
	n.mu.Lock()
	n.addrs = addrs
	n.mu.Unlock()
	st := resolver.State{}
	for _, a := range addrs {
		st.Endpoints = append(st.Endpoints, resolver.Endpoint{Addresses: []resolver.Address{{Addr: a}}})
	}
	n.r.UpdateState(st)
}

// Do implements Client.
func (n *naiveGRPC) Do(ctx context.Context, _ Request) Attempt { return n.call.do(ctx, n.cc) }

// Listed implements Client: the addresses of the discovery's last answer.
func (n *naiveGRPC) Listed() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.addrs)
}

// Stats implements Client: it ejects nothing.
func (n *naiveGRPC) Stats() ClientStats { return ClientStats{} }

// Close implements Client.
func (n *naiveGRPC) Close() {
	n.cancel()
	<-n.done
	_ = n.cc.Close()
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
