package grpcdrain_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainkit/drainkit/grpcdrain"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// Clients that connect and call without pause across t0 and through many
// rotations of the accepting grpc.Server lose no call: a connection accepted
// just as its grpc.Server stops is handed to the next one.
func TestNoCallLostAcrossRotations(t *testing.T) {
	const window = 1200 * time.Millisecond
	in := start(t, timings(window, 2*time.Second), nil, grpcdrain.WithGoAwayAfter(20*time.Millisecond))
	var ok, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				// A new client each time: a new connection each time.
				cc := dial(t, in.addr)
				_, err := testpb.NewTestServiceClient(cc).EmptyCall(ctxTimeout(t, 2*time.Second), &testpb.Empty{})
				cc.Close()
				if err != nil {
					failed.Add(1)
					t.Errorf("call: %v", err)
					continue
				}
				ok.Add(1)
			}
		}()
	}
	// One long-lived client as well: it follows each GOAWAY to a new
	// connection.
	wg.Add(1)
	go func() {
		defer wg.Done()
		c := testpb.NewTestServiceClient(dial(t, in.addr))
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := c.EmptyCall(ctxTimeout(t, 2*time.Second), &testpb.Empty{}); err != nil {
				failed.Add(1)
				t.Errorf("long-lived client's call: %v", err)
			}
		}
	}()
	time.Sleep(200 * time.Millisecond) // load before t0
	in.drain()
	time.Sleep(window - 300*time.Millisecond) // load through the window, stopping before it ends
	close(stop)
	wg.Wait()
	if err := in.wait(10 * time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
	tl := in.timeline()
	t.Logf("%d calls ok, %d failed, %d late arrivals", ok.Load(), failed.Load(), tl.LateArrivals)
	if ok.Load() < 50 {
		t.Errorf("only %d calls: the load did not exercise rotations", ok.Load())
	}
}
