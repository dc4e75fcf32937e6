package loadtest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// Every third call fails: the counts add up to the calls made, and the
// errors kept are the first few.
func TestCounts(t *testing.T) {
	var calls atomic.Int64
	boom := errors.New("boom")
	l := Start(3, time.Second, func(ctx context.Context) error {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("call context has no deadline")
		}
		if calls.Add(1)%3 == 0 {
			return boom
		}
		return nil
	})
	for l.OK() < 100 {
		time.Sleep(time.Millisecond) // polling the counter under test
	}
	l.Stop()
	l.Stop()
	if got := l.OK() + l.Failed(); got != calls.Load() {
		t.Errorf("ok %d + failed %d = %d; want %d calls", l.OK(), l.Failed(), got, calls.Load())
	}
	if l.Failed() == 0 || len(l.Errors()) == 0 || len(l.Errors()) > maxErrors || !errors.Is(l.Errors()[0], boom) {
		t.Errorf("failed %d, errors %v; want failures, at most %d errors kept", l.Failed(), l.Errors(), maxErrors)
	}
}
