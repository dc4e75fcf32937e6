package syncx_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
)

func TestLatestWaitFor(t *testing.T) {
	var l syncx.Latest[int]
	if _, ok, _ := l.Load(); ok {
		t.Fatal("zero Latest has a value")
	}
	got := make(chan int, 1)
	go func() {
		v, err := l.WaitFor(context.Background(), nil, func(v int) bool { return v >= 3 })
		if err != nil {
			v = -1
		}
		got <- v
	}()
	for i := 1; i <= 3; i++ {
		l.Publish(i)
	}
	select {
	case v := <-got:
		if v != 3 {
			t.Fatalf("WaitFor returned %d, want 3", v)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("WaitFor did not return after the value satisfied cond")
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if v, err := l.WaitFor(ctx, nil, func(v int) bool { return v > 10 }); !errors.Is(err, context.Canceled) || v != 3 {
		t.Fatalf("WaitFor with a done ctx = %d, %v", v, err)
	}
	stop := make(chan struct{})
	close(stop)
	if _, err := l.WaitFor(context.Background(), stop, func(v int) bool { return v > 10 }); !errors.Is(err, syncx.ErrStopped) {
		t.Fatalf("WaitFor with a closed stop = %v", err)
	}
}

// Offer keeps only the newest unread value.
func ExampleOffer() {
	c := make(chan string, 1)
	syncx.Offer(c, "v1")
	syncx.Offer(c, "v2") // replaces the unread v1
	fmt.Println(<-c)
	// Output: v2
}

// A reader of Latest sees only the newest value; a waiter wakes when a
// value satisfies its condition.
func ExampleLatest() {
	var l syncx.Latest[string]
	l.Publish("starting")
	l.Publish("ready")
	v, ok, _ := l.Load()
	fmt.Println(v, ok)

	done := make(chan string)
	go func() {
		v, _ := l.WaitFor(context.Background(), nil, func(s string) bool { return s == "draining" })
		done <- v
	}()
	l.Publish("draining")
	fmt.Println(<-done)
	// Output:
	// ready true
	// draining
}
