// Package testpoll waits in tests for a condition that another goroutine or
// process makes true: it polls with a deadline instead of sleeping a fixed
// time, and fails the test with what it waited for when the deadline passes.
package testpoll

import (
	"fmt"
	"testing"
	"time"
)

// Interval is how long Eventually sleeps between two calls of its condition.
const Interval = 20 * time.Millisecond

// Eventually calls cond every Interval until it returns true, and returns how
// long that took from the first call. cond's string is a detail for the
// failure message (its last value is shown). Once timeout has passed after
// the first call without cond holding, Eventually fails t with
// "<what>: not within <timeout> (last: <detail>)" (t.Fatalf, so from the
// test's goroutine only). cond is always called at least once.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	var detail string
	for {
		var ok bool
		ok, detail = cond()
		if ok {
			return time.Since(start)
		}
		if time.Since(start) > timeout {
			t.Fatalf("%s: not within %s (last: %s)", what, timeout, detail)
		}
		time.Sleep(Interval) // polling interval, not synchronisation
	}
}

// One polls list as Eventually does until it returns exactly one element,
// and returns that element. The failure detail is list's last elements and
// error.
func One(t testing.TB, timeout time.Duration, what string, list func() ([]string, error)) string {
	t.Helper()
	var one string
	Eventually(t, timeout, what, func() (bool, string) {
		l, err := list()
		if len(l) == 1 {
			one = l[0]
		}
		return len(l) == 1, fmt.Sprint(l, err)
	})
	return one
}
