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

// recycled starts two instances of orders and one of payments (serving
// the test service too, unless lacking), and returns a client of orders,
// with the idempotent methods, whose view also lists payments' address as
// an instance of orders (a recycled pod IP), with the payments instance and
// those of orders.
func recycled(t *testing.T, lacking bool, idempotent ...string) (testpb.TestServiceClient, *replica, []*replica) {
	t.Helper()
	reg := newTestRegistry()
	orders := []*replica{startReplica(t, reg), startReplica(t, reg)}
	payments := startReplicaWith(t, nil, "payments", !lacking)
	reg.set("orders-recycled", &registry.Instance{ID: "orders-recycled", Address: "127.0.0.1", Port: payments.port})
	return dial(t, reg, idempotent...), payments, orders
}

// servedBy sums what the replicas served.
func servedBy(rs []*replica) int64 {
	var n int64
	for _, rp := range rs {
		n += rp.svc.served.Load()
	}
	return n
}

// emptyCall makes one EmptyCall and returns the identity its answer named.
func emptyCall(client testpb.TestServiceClient) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var md metadata.MD
	_, err := client.EmptyCall(ctx, &testpb.Empty{}, grpc.Header(&md))
	id := md.Get(registry.IdentityMetadata)
	if len(id) != 1 {
		return "", err
	}
	return id[0], err
}

// ejectedOnce checks that payments answered at most once per ejection
// since start: the first lasts 5 s, the next 10 s, ...
func ejectedOnce(t *testing.T, payments int64, calls int, start time.Time) {
	t.Helper()
	if most := 1 + int64(time.Since(start)/(5*time.Second)); payments > most {
		t.Errorf("payments reached %d times in %d calls in %v, want at most %d: ejected at its first answer", payments, calls, time.Since(start), most)
	}
}

// An address of the view now served by another drainkit service (a
// recycled pod IP: the view lists payments' address as an instance of
// orders), real gRPC servers drained by grpcdrain naming themselves, and
// a method the client names idempotent: no call is answered by payments
// (each answer the client gets names an instance of orders), none fails
// (the one payments answered is sent again, to orders), and the address is
// ejected (payments sees one call per ejection, not its share).
func TestWrongServiceNeverAnswers(t *testing.T) {
	client, payments, _ := recycled(t, false, "grpc.testing.TestService/EmptyCall")
	call := func(i int) {
		if id, err := emptyCall(client); err != nil || !strings.HasPrefix(id, "orders/") {
			t.Fatalf("call %d answered by %q: %v; want an instance of orders", i, id, err)
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
	ejectedOnce(t, payments.svc.served.Load(), calls, start)
	t.Logf("%d calls, payments reached %d times (answers discarded)", calls, payments.svc.served.Load())
}

// The reused address serves another drainkit service that lacks the
// method: it answers UNIMPLEMENTED, naming itself (grpcdrain's
// unknown-service handler), so nothing ran there. Of 40 calls of a method
// not named idempotent none fails: the one payments answered is sent again
// to orders, and the address is ejected at once.
func TestWrongServiceLackingTheMethod(t *testing.T) {
	client, payments, orders := recycled(t, true)
	// At least n calls, and on until round robin reached payments (its
	// connection may be READY last).
	const n = 40
	start, calls, failed := time.Now(), 0, 0
	for ; calls < n || payments.svc.served.Load() == 0; calls++ {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("payments not reached in %d calls", calls)
		}
		if id, err := emptyCall(client); err != nil || !strings.HasPrefix(id, "orders/") {
			failed++
			t.Errorf("call %d answered by %q: %v; want an instance of orders", calls, id, err)
		}
	}
	if failed != 0 || servedBy(orders) != int64(calls) {
		t.Errorf("%d of %d calls failed, orders served %d; want 0 failed, all served by orders", failed, calls, servedBy(orders))
	}
	ejectedOnce(t, payments.svc.served.Load(), calls, start)
	t.Logf("%d calls, payments reached %d times (answers discarded, calls sent again)", calls, payments.svc.served.Load())
}

// A call of a method not named idempotent that a same-named method of the
// other service answered (payments serves the test service too) ran there:
// it fails with UNAVAILABLE, saying it was not sent again, and orders never
// sees it; the address is ejected, and the calls after it go to orders.
func TestWrongServiceRanCallNotResent(t *testing.T) {
	client, payments, orders := recycled(t, false)
	start, calls := time.Now(), 0
	for ; payments.svc.served.Load() == 0; calls++ {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("payments not reached in %d calls", calls)
		}
		before := servedBy(orders)
		id, err := emptyCall(client)
		switch {
		case payments.svc.served.Load() == 0:
			if err != nil || !strings.HasPrefix(id, "orders/") {
				t.Fatalf("call %d answered by %q: %v; want an instance of orders", calls, id, err)
			}
		case status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "not sent again") || !strings.Contains(err.Error(), `"payments/`):
			t.Fatalf("call %d, answered by payments: %v; want UNAVAILABLE naming payments, not sent again", calls, err)
		case servedBy(orders) != before:
			t.Fatalf("call %d, answered by payments, was sent again to orders", calls)
		}
	}
	for range 40 {
		if id, err := emptyCall(client); err != nil || !strings.HasPrefix(id, "orders/") {
			t.Fatalf("call %d answered by %q: %v; want an instance of orders", calls, id, err)
		}
		calls++
	}
	ejectedOnce(t, payments.svc.served.Load(), calls, start)
}

// A stream cannot be replayed: one opened on the address that answers as
// payments fails with UNAVAILABLE at its header, naming both services, and
// the address is ejected, so the streams after it go to orders (whose test
// service answers UNIMPLEMENTED for this method).
func TestWrongServiceFailsStream(t *testing.T) {
	client, _, _ := recycled(t, false)

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
