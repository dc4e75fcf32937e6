package consumer_test

import (
	"net"
	"strconv"
	"testing"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/registry"
)

// endpointOf is b's address as an endpoint of scheme.
func endpointOf(t *testing.T, scheme string, b *backend) registry.Endpoint {
	t.Helper()
	host, p, err := net.SplitHostPort(b.addr())
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(p)
	return registry.Endpoint{Scheme: scheme, Address: host, Port: port}
}

// TestTransportPicksEndpointByScheme: one registration per instance lists
// an HTTP and a gRPC endpoint; the Transport sends to the "http" one
// whatever Address and Port the source chose, leaves out an instance with
// no "http" endpoint (a gRPC-only process), and uses the address of an
// instance that lists no endpoints. With Scheme "grpc" it takes the other.
func TestTransportPicksEndpointByScheme(t *testing.T) {
	web, rpc, plain := newBackend(t, "web", nil), newBackend(t, "rpc", nil), newBackend(t, "plain", nil)
	grpcOnly := deadBackend(t, "grpc-only")
	both := registry.Instance{ID: "both", Endpoints: []registry.Endpoint{endpointOf(t, "http", web), endpointOf(t, "grpc", rpc)}}
	both.Address, both.Port = both.Endpoints[1].Address, both.Endpoints[1].Port // the source chose grpc
	only := registry.Instance{ID: "grpc-only", Endpoints: []registry.Endpoint{endpointOf(t, "grpc", grpcOnly)}}
	only.Address, only.Port = only.Endpoints[0].Address, only.Endpoints[0].Port
	none := endpointOf(t, "", plain)
	unnamed := registry.Instance{ID: "unnamed", Address: none.Address, Port: none.Port}
	src := consumer.StaticInstances("orders", []registry.Instance{both, only, unnamed})

	_, tr, _ := newClient(t, src, consumer.WatcherOptions{}, consumer.Options{})
	for range 20 {
		if _, err := do(tr, "GET", ""); err != nil {
			t.Fatal(err)
		}
	}
	if web.hits.Load() != 10 || plain.hits.Load() != 10 || rpc.hits.Load() != 0 {
		t.Errorf("hits: http endpoint %d, plain %d, grpc endpoint %d; want 10, 10, 0 (the gRPC-only instance left out)",
			web.hits.Load(), plain.hits.Load(), rpc.hits.Load())
	}

	_, tr2, _ := newClient(t, src, consumer.WatcherOptions{}, consumer.Options{Scheme: "GRPC", MaxAttempts: 1})
	for range 4 {
		_, _ = do(tr2, "GET", "") // the grpc-only instance is dead: half the requests fail
	}
	if rpc.hits.Load() == 0 || web.hits.Load() != 10 {
		t.Errorf("Scheme grpc: grpc endpoint %d hits, http endpoint %d; want the grpc endpoint used", rpc.hits.Load(), web.hits.Load())
	}
}
