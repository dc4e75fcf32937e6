package consul

import (
	"math/rand/v2"
	"time"
)

// backoff is jittered exponential backoff: each wait is drawn from
// [d/2, d], where d starts at min and doubles up to max.
type backoff struct {
	min, max time.Duration
	cur      time.Duration
}

func (b *backoff) next() time.Duration {
	if b.cur == 0 {
		b.cur = b.min
	} else {
		b.cur = min(2*b.cur, b.max)
	}
	half := b.cur / 2
	return half + rand.N(half+1)
}

func (b *backoff) reset() { b.cur = 0 }
