package syncx_test

import (
	"context"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/drainkit/drainkit/internal/syncx"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestCounterSnapshot(t *testing.T) {
	var c syncx.Counter
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				x := new(int64)
				s := syncx.StripeOf(unsafe.Pointer(x))
				k := syncx.Kind(i & 1)
				c.Begin(s, k)
				if a, b := c.Snapshot(); a < 0 || b < 0 {
					t.Errorf("negative snapshot %d %d", a, b)
				}
				c.End(s, k)
			}
		}()
	}
	c.Begin(3, 1)
	wg.Wait()
	if a, b := c.Snapshot(); a != 0 || b != 1 {
		t.Fatalf("snapshot %d, %d; want 0, 1", a, b)
	}
	c.End(7, 1) // any stripe
	if a, b := c.Snapshot(); a != 0 || b != 0 {
		t.Fatalf("snapshot %d, %d; want 0, 0", a, b)
	}
}

func TestAwaitIdle(t *testing.T) {
	w := syncx.NewWake()
	var mu sync.Mutex
	busy := 3
	idle := func() bool { mu.Lock(); defer mu.Unlock(); return busy == 0 }
	go func() {
		for range 3 {
			mu.Lock()
			busy--
			mu.Unlock()
			w.Notify()
		}
	}()
	if err := syncx.AwaitIdle(context.Background(), w, idle); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := syncx.AwaitIdle(ctx, w, func() bool { return false }); err != context.DeadlineExceeded {
		t.Fatalf("AwaitIdle = %v; want DeadlineExceeded", err)
	}
}

func TestWaitFor(t *testing.T) {
	var wg sync.WaitGroup
	if !syncx.WaitFor(&wg, time.Second) {
		t.Fatal("empty WaitGroup not done")
	}
	wg.Add(1)
	if syncx.WaitFor(&wg, 10*time.Millisecond) {
		t.Fatal("pending WaitGroup reported done")
	}
	wg.Done()
}

func TestPhase(t *testing.T) {
	type ph int32
	p := syncx.NewPhase[ph](3)
	select {
	case <-p.Done(0):
	default:
		t.Fatal("phase 0 not reached at start")
	}
	if !p.Advance(2) || p.Advance(1) || p.Advance(2) {
		t.Fatal("Advance must report true once per phase moved to, false backwards")
	}
	for i := ph(1); i <= 2; i++ {
		select {
		case <-p.Done(i):
		default:
			t.Fatalf("phase %d passed but its channel is open", i)
		}
	}
	if p.Reached(3) || !p.Reached(2) {
		t.Fatal("Reached wrong")
	}
	select {
	case <-p.Done(3):
		t.Fatal("phase 3 channel closed early")
	default:
	}
}
