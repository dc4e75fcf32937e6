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

// recycled starts two instances of orders and one of payments, and returns
// a client of orders whose view also lists payments' address as an
// instance of orders (a recycled pod IP), with the payments instance.
func recycled(t *testing.T) (testpb.TestServiceClient, *replica) {
	t.Helper()
	reg := newTestRegistry()
	startReplica(t, reg)
	startReplica(t, reg)
	payments := startReplicaOf(t, nil, "payments")
	reg.set("orders-recycled", &registry.Instance{ID: "orders-recycled", Address: "127.0.0.1", Port: payments.port})
	return dial(t, reg), payments
}

// An address of the view now served by another drainkit service (a
// recycled pod IP: the view lists payments' address as an instance of
// orders), real gRPC servers drained by grpcdrain naming themselves: no
// call is answered by payments (each answer the client gets names an
// instance of orders), none fails (the one payments answered is sent again,
// to orders, whatever its method: no retry policy is configured), and the
// address is ejected (payments sees one call per ejection, not its share).
func TestWrongServiceNeverAnswers(t *testing.T) {
	client, payments := recycled(t)

	call := func(i int) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var md metadata.MD
		if _, err := client.EmptyCall(ctx, &testpb.Empty{}, grpc.Header(&md)); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if id := md.Get(registry.IdentityMetadata); len(id) != 1 || !strings.HasPrefix(id[0], "orders/") {
			t.Fatalf("call %d answered by %q, want an instance of orders", i, id)
		}
	}
	// Until round robin reaches payments (its connection may be READY last).
	start, calls := time.Now(), 0
	for ; payments.svc.served.Load() == 0; calls++ {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("payments not reached in %d calls", calls)
		}
		call(calls)
	}
	for range 300 {
		call(calls)
		calls++
	}
	served := payments.svc.served.Load()
	// One call per ejection: the first lasts 5 s, the next 10 s, ...
	if most := 1 + int64(time.Since(start)/(5*time.Second)); served > most {
		t.Errorf("payments served %d of %d calls in %v, want at most %d: ejected at its first answer", served, calls, time.Since(start), most)
	}
	t.Logf("%d calls, payments reached %d times (answers discarded)", calls, served)
}

// A stream cannot be replayed: one opened on the address that answers as
// payments fails with UNAVAILABLE at its header, naming both services, and
// the address is ejected, so the streams after it go to orders (whose test
// service answers UNIMPLEMENTED for this method).
func TestWrongServiceFailsStream(t *testing.T) {
	client, _ := recycled(t)

	stream := func(i int) (wrong bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		st, err := client.FullDuplexCall(ctx)
		if err == nil {
			_, err = st.Recv()
		}
		switch status.Code(err) {
		case codes.Unimplemented: // orders answered
			return false
		case codes.Unavailable:
			if !strings.Contains(err.Error(), `"payments/`) || !strings.Contains(err.Error(), `"orders"`) {
				t.Fatalf("stream %d: %v, want an error naming payments and orders", i, err)
			}
			return true
		}
		t.Fatalf("stream %d: %v", i, err)
		return false
	}
	// Until round robin reaches payments (its connection may be READY last).
	start, n := time.Now(), 0
	for ; !stream(n); n++ {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("payments not reached in %d streams", n)
		}
	}
	wrong := 1
	for i := range 30 {
		if stream(n + 1 + i) {
			wrong++
		}
	}
	if most := 1 + int(time.Since(start)/(5*time.Second)); wrong > most {
		t.Errorf("%d streams reached payments in %v, want at most %d: ejected at the first", wrong, time.Since(start), most)
	}
}
