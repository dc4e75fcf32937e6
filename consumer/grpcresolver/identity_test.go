package grpcresolver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

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

// A stream cannot be replayed: one opened on the address that answers as
// payments fails with UNAVAILABLE at its header, naming both services, and
// the address is ejected, so the streams after it go to orders (whose test
// service answers UNIMPLEMENTED for this method).
func TestWrongServiceFailsStream(t *testing.T) {
	reg := newTestRegistry()
	startReplica(t, reg)
	startReplica(t, reg)
	payments := startReplicaOf(t, nil, "payments")
	reg.set("orders-recycled", &registry.Instance{ID: "orders-recycled", Address: "127.0.0.1", Port: payments.port})
	client := dial(t, reg)

	start := time.Now()
	wrong := 0
	for i := range 30 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		st, err := client.FullDuplexCall(ctx)
		if err == nil {
			_, err = st.Recv()
		}
		cancel()
		switch status.Code(err) {
		case codes.Unimplemented: // orders answered
		case codes.Unavailable:
			if !strings.Contains(err.Error(), `"payments/`) || !strings.Contains(err.Error(), `"orders"`) {
				t.Fatalf("stream %d: %v, want an error naming payments and orders", i, err)
			}
			wrong++
		default:
			t.Fatalf("stream %d: %v", i, err)
		}
	}
	if most := 1 + int(time.Since(start)/(5*time.Second)); wrong == 0 || wrong > most {
		t.Errorf("%d of 30 streams reached payments in %v, want 1 to %d: reached, then ejected", wrong, time.Since(start), most)
	}
}
