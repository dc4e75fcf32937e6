package testpoll_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/testpoll"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fatalRecorder is a testing.TB whose Fatalf records the message and ends
// the calling goroutine, as testing.T's does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Helper() {}

func (f *fatalRecorder) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// Eventually returns once cond holds, after polling; it calls cond once
// more than the failures before.
func TestEventuallyHolds(t *testing.T) {
	n := 0
	took := testpoll.Eventually(t, 5*time.Second, "third call", func() (bool, string) {
		n++
		return n == 3, fmt.Sprint(n)
	})
	if n != 3 || took < 2*testpoll.Interval {
		t.Fatalf("returned after %d calls, %s; want 3 calls, at least two intervals", n, took)
	}
}

// Eventually fails the test at the timeout with what and cond's last detail.
func TestEventuallyTimesOut(t *testing.T) {
	f := &fatalRecorder{TB: t}
	n := 0
	done := make(chan struct{})
	go func() {
		defer close(done)
		testpoll.Eventually(f, 100*time.Millisecond, "never", func() (bool, string) {
			n++
			return false, fmt.Sprint("call ", n)
		})
		t.Error("Eventually returned although cond never held")
	}()
	<-done
	want := fmt.Sprintf("never: not within 100ms (last: call %d)", n)
	if f.msg != want || n < 2 || !strings.HasPrefix(f.msg, "never: ") {
		t.Fatalf("failure %q after %d calls; want %q", f.msg, n, want)
	}
}

// One waits through an empty and a two-element list for a single element.
func TestOne(t *testing.T) {
	answers := [][]string{nil, {"a", "b"}, {"c"}}
	n := 0
	got := testpoll.One(t, 5*time.Second, "one element", func() ([]string, error) {
		l := answers[min(n, len(answers)-1)]
		n++
		return l, nil
	})
	if got != "c" || n != 3 {
		t.Fatalf("One = %q after %d calls, want \"c\" after 3", got, n)
	}
}
