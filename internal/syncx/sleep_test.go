package syncx_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
)

func TestSleep(t *testing.T) {
	if err := syncx.Sleep(context.Background(), time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := syncx.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep with a done ctx = %v", err)
	}
	if err := syncx.Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep(0) with a done ctx = %v", err)
	}
}
