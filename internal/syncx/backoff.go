package syncx

import (
	"math/rand/v2"
	"time"
)

// Backoff is jittered exponential backoff between retries: each wait is drawn
// from [d/2, d], where d starts at Min and doubles up to Max. Reset after a
// success starts again from Min. The zero value waits 0; it is not safe for
// concurrent use.
type Backoff struct {
	Min, Max time.Duration
	cur      time.Duration
}

// Next returns the next wait.
func (b *Backoff) Next() time.Duration {
	if b.cur == 0 {
		b.cur = b.Min
	} else {
		b.cur = min(2*b.cur, b.Max)
	}
	half := b.cur / 2
	return half + rand.N(half+1)
}

// Reset makes the next wait about Min again.
func (b *Backoff) Reset() { b.cur = 0 }
