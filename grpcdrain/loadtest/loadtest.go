// Package loadtest keeps calls flowing for tests of a drain: callers that
// call back to back until stopped, counting successes and failures.
//
// It lives in the module whose tests use it, not in a module of its own, so
// that a program importing grpcdrain needs no test-only module (issue 33);
// it is drainkit's own test harness, and its API may change in any release.
package loadtest

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// maxErrors is how many errors a Load keeps for the test's report.
const maxErrors = 5

// Load is n callers calling a function back to back. Make one with Start.
type Load struct {
	ok, failed atomic.Int64
	stop       chan struct{}
	stopOnce   sync.Once
	wg         sync.WaitGroup

	mu   sync.Mutex
	errs []error
}

// Start starts n goroutines, each calling call back to back with a context
// that times out after timeout, until Stop.
func Start(n int, timeout time.Duration, call func(context.Context) error) *Load {
	l := &Load{stop: make(chan struct{})}
	for range n {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				err := call(ctx)
				cancel()
				if err == nil {
					l.ok.Add(1)
					continue
				}
				l.failed.Add(1)
				l.mu.Lock()
				if len(l.errs) < maxErrors {
					l.errs = append(l.errs, err)
				}
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// OK and Failed count the calls that returned nil and an error so far.
func (l *Load) OK() int64     { return l.ok.Load() }
func (l *Load) Failed() int64 { return l.failed.Load() }

// Errors returns the first few errors (at most 5).
func (l *Load) Errors() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

// Stop stops the callers and waits for their calls in progress to return.
// It is idempotent.
func (l *Load) Stop() {
	l.stopOnce.Do(func() { close(l.stop) })
	l.wg.Wait()
}
