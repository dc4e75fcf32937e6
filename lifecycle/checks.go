package lifecycle

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// CheckOptions set how readiness checks run and when they move the instance
// between READY and EJECTED (hysteresis: SuccessThreshold > FailureThreshold).
type CheckOptions struct {
	// Interval between check rounds (key checks.interval, default 5s, > 0).
	Interval time.Duration
	// Timeout per check; a check still running then fails (key
	// checks.timeout, default 1s, > 0 and <= Interval).
	Timeout time.Duration
	// FailureThreshold consecutive failed rounds move READY -> EJECTED (key
	// checks.failure_threshold, default 3, >= 1).
	FailureThreshold int
	// SuccessThreshold consecutive passed rounds move a check-ejected
	// instance back to READY (key checks.success_threshold, default 5,
	// > FailureThreshold).
	SuccessThreshold int
}

// DefaultCheckOptions returns interval 5s, timeout 1s, failure threshold 3
// and success threshold 5.
func DefaultCheckOptions() CheckOptions {
	return CheckOptions{Interval: 5 * time.Second, Timeout: time.Second, FailureThreshold: 3, SuccessThreshold: 5}
}

// Validate returns a *RangeError naming the first key out of range, or nil.
func (c CheckOptions) Validate() error {
	switch {
	case c.Interval <= 0 || c.Interval > MaxDuration:
		return &RangeError{"checks.interval", c.Interval.String(), "must be > 0 and <= " + MaxDuration.String()}
	case c.Timeout <= 0 || c.Timeout > c.Interval:
		return &RangeError{"checks.timeout", c.Timeout.String(), "must be > 0 and <= checks.interval (" + c.Interval.String() + ")"}
	case c.FailureThreshold < 1 || c.FailureThreshold > 1000:
		return &RangeError{"checks.failure_threshold", strconv.Itoa(c.FailureThreshold), "must be between 1 and 1000"}
	case c.SuccessThreshold <= c.FailureThreshold || c.SuccessThreshold > 1000:
		return &RangeError{"checks.success_threshold", strconv.Itoa(c.SuccessThreshold),
			fmt.Sprintf("must be > checks.failure_threshold (%d) and <= 1000", c.FailureThreshold)}
	}
	return nil
}

// runChecks runs check rounds every Interval until ctx is done. A round passes
// when every check passes within Timeout.
func (l *Lifecycle) runChecks(ctx context.Context) {
	checkers := locked(l, &l.checkers)
	if len(checkers) == 0 {
		return
	}
	co := l.opts.checks
	tick := time.NewTicker(co.Interval)
	defer tick.Stop()
	var fails, oks int
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if l.checkRound(ctx, checkers) {
			oks, fails = oks+1, 0
		} else {
			fails, oks = fails+1, 0
		}
		if ctx.Err() != nil {
			return
		}
		l.applyCheckRound(fails, oks)
	}
}

// checkRound runs all checks concurrently and caches their results.
func (l *Lifecycle) checkRound(ctx context.Context, checkers []Checker) bool {
	results := make([]CheckResult, len(checkers))
	var each sync.WaitGroup
	for i, c := range checkers {
		each.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, l.opts.checks.Timeout)
			defer cancel()
			start := time.Now()
			err := c.Check(cctx)
			if err == nil && cctx.Err() != nil {
				err = cctx.Err()
			}
			results[i] = CheckResult{Name: c.Name(), OK: err == nil, At: start, Duration: time.Since(start)}
			if err != nil {
				results[i].Err = err.Error()
			}
		})
	}
	each.Wait()
	l.mu.Lock()
	copy(l.checkResults, results)
	l.mu.Unlock()
	for _, r := range results {
		if !r.OK {
			return false
		}
	}
	return true
}

// applyCheckRound moves READY -> EJECTED after FailureThreshold failed rounds
// and a check-ejected EJECTED -> READY after SuccessThreshold passed rounds.
func (l *Lifecycle) applyCheckRound(fails, oks int) {
	co := l.opts.checks
	l.mu.Lock()
	st, op := State(l.state.Load()), l.operatorEjectedLocked()
	l.mu.Unlock()
	switch {
	case st == Ready && fails >= co.FailureThreshold:
		_, _ = l.transition(Ejected, CauseChecks, fmt.Sprintf("readiness checks failed %d times in a row", fails),
			func(s State) error { return skipUnless(s == Ready) })
	case st == Ejected && !op && oks >= co.SuccessThreshold:
		_, _ = l.transition(Ready, CauseChecks, fmt.Sprintf("readiness checks passed %d times in a row", oks),
			func(s State) error { return skipUnless(s == Ejected && !l.operatorEjectedLocked()) })
	}
}

// skipUnless is a transition guard's answer: proceed when ok, else a no-op.
func skipUnless(ok bool) error {
	if ok {
		return nil
	}
	return errSkip
}
