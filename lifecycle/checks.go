package lifecycle

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// runChecks runs check rounds every Interval until ctx is done. A round passes
// when every check passes within Timeout.
func (l *Lifecycle) runChecks(ctx context.Context) {
	checkers := locked(l, &l.checkers)
	if len(checkers) == 0 {
		return
	}
	co := l.opts.Checks
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
func (l *Lifecycle) checkRound(ctx context.Context, checkers []hook) bool {
	results := make([]CheckResult, len(checkers))
	var each sync.WaitGroup
	for i, c := range checkers {
		each.Go(func() {
			cctx, cancel := context.WithTimeout(ctx, l.opts.Checks.Timeout)
			defer cancel()
			start := time.Now()
			err := c.fn(cctx)
			if err == nil && cctx.Err() != nil {
				err = cctx.Err()
			}
			results[i] = CheckResult{Name: c.name, OK: err == nil, At: start, Duration: time.Since(start)}
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
	co := l.opts.Checks
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
