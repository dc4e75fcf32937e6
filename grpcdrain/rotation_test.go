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
	// The load runs through the window until 60 calls succeeded after t0
	// (or until 300ms before the window ends): on an idle machine that is
	// well under a second, on a busy one it takes longer, and the window is
	// long enough for both.
	const window = 4 * time.Second
	in := start(t, timings(window, 2*time.Second), nil, grpcdrain.WithGoAwayAfter(20*time.Millisecond))
	var ok, failed, sinceT0 atomic.Int64
	var draining atomic.Bool
	enough := make(chan struct{})
	var enoughOnce sync.Once
	succeeded := func() {
		ok.Add(1)
		if draining.Load() && sinceT0.Add(1) >= 60 {
			enoughOnce.Do(func() { close(enough) })
		}
	}
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
				succeeded()
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
	draining.Store(true)
	in.drain()
	select { // load through the window, stopping before it ends
	case <-enough:
	case <-time.After(window - 300*time.Millisecond):
	}
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
