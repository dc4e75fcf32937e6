package grpcresolver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"

	"github.com/drainkit/drainkit/registry"
)

// An address of the view now served by another drainkit service (a
// recycled pod IP: the view lists payments' address as an instance of
// orders), real gRPC servers drained by grpcdrain naming themselves: no
// call is answered by payments (each answer the client gets names an
// instance of orders), none fails (the one payments answered is sent again,
// to orders, whatever its method: no retry policy is configured), and the
// address is ejected (payments sees one call per ejection, not its share).
func TestWrongServiceNeverAnswers(t *testing.T) {
	reg := newTestRegistry()
	startReplica(t, reg)
	startReplica(t, reg)
	payments := startReplicaOf(t, nil, "payments")
	reg.set("orders-recycled", &registry.Instance{ID: "orders-recycled", Address: "127.0.0.1", Port: payments.port})
	client := dial(t, reg)

	start := time.Now()
	const calls = 300
	for i := range calls {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var md metadata.MD
		_, err := client.EmptyCall(ctx, &testpb.Empty{}, grpc.Header(&md))
		cancel()
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if id := md.Get(registry.IdentityMetadata); len(id) != 1 || !strings.HasPrefix(id[0], "orders/") {
			t.Fatalf("call %d answered by %q, want an instance of orders", i, id)
		}
	}
	served := payments.svc.served.Load()
	// One call per ejection: the first lasts 5 s, the next 10 s, ...
	if most := 1 + int64(time.Since(start)/(5*time.Second)); served == 0 || served > most {
		t.Errorf("payments served %d of %d calls in %v, want 1 to %d: reached, then ejected", served, calls, time.Since(start), most)
	}
	t.Logf("%d calls, payments reached %d times (answers discarded)", calls, served)
}
