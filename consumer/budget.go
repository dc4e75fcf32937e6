package consumer

import (
	"sync"
	"time"
)

// budgetWindow is the span over which a retry budget counts.
const budgetWindow = 10 * time.Second

// budget is a retry budget: over the current window and the one before it,
// retries may not exceed percent of the requests plus floor per second. It
// reads the Transport's request counter, so the request path pays nothing
// for it; only retries take its lock.
type budget struct {
	percent, floor float64

	mu         sync.Mutex
	start      time.Time // current window's start
	reqAtStart uint64    // request count at start
	retries    uint64    // retries in the current window
	prevReq    uint64    // requests in the previous window
	prevRetry  uint64    // retries in the previous window
	prevSpan   time.Duration
}

func newBudget(b RetryBudget, now time.Time) *budget {
	return &budget{percent: max(b.Percent, 0), floor: max(b.MinPerSecond, 0), start: now}
}

// allow takes one retry out of the budget if it has one; requests is the
// number of requests so far.
func (b *budget) allow(requests uint64, now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if el := now.Sub(b.start); el >= budgetWindow {
		b.prevReq, b.prevRetry, b.prevSpan = requests-b.reqAtStart, b.retries, budgetWindow
		if el >= 2*budgetWindow {
			b.prevReq, b.prevRetry, b.prevSpan = 0, 0, 0
		}
		b.start, b.reqAtStart, b.retries = now, requests, 0
	}
	span := b.prevSpan + now.Sub(b.start)
	reqs := b.prevReq + requests - b.reqAtStart
	allowed := b.percent/100*float64(reqs) + b.floor*max(span.Seconds(), 1)
	if float64(b.prevRetry+b.retries+1) > allowed {
		return false
	}
	b.retries++
	return true
}
