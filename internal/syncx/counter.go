package syncx

import (
	"sync/atomic"
	"unsafe"
)

// Stripes is the number of stripes of a Counter.
const Stripes = 16

// Kind is what a Counter entry counts; one Counter counts up to two kinds
// (grpcdrain: unary calls and streams; httpdrain: requests only).
type Kind uint8

// Counter counts work in flight (running handlers), striped so that
// concurrent work on different cores rarely writes the same cache line. The
// zero value counts nothing and is ready to use; a Counter must not be
// copied.
//
// Consistency. Each stripe holds monotonic counts of begun and ended work,
// never a signed level, so Begin and End may use any stripes (in practice
// the same one, chosen with StripeOf). Snapshot reads every ended count
// before any begun count. Work that was counted as ended began before that
// read, hence before the begun counts were read: no result is ever negative.
// And if a result is zero, no work of that kind was running at the instant
// between the two passes: any work running then had begun before the second
// pass (so it was counted as begun) and had not ended before the first (so
// it was not counted as ended). A zero Snapshot is therefore a true "idle at
// one instant", not merely a low sum; work beginning after that instant is
// the caller's to order (e.g. httpdrain reads its busy-connection count after
// the Snapshot: a request can only begin on a busy connection).
type Counter struct {
	stripe [Stripes]struct {
		begun [2]atomic.Int64 // by Kind
		ended [2]atomic.Int64
		_     [CacheLine - 32]byte
	}
}

// StripeOf picks a stripe from the address of an object allocated for one
// piece of work (an *http.Request, a *grpc.UnaryServerInfo). It hashes the
// address's 8 KiB page, not the address itself: the Go allocator serves each
// core (P) from spans of its own, so work allocated on one core mostly lands
// on one stripe, and its Begin and End rarely move a cache line between
// cores. It costs a multiply and a shift.
func StripeOf(p unsafe.Pointer) int {
	return int(uint64(uintptr(p)>>13) * 0x9E3779B97F4A7C15 >> 60)
}

// Begin counts one piece of work of kind k as begun, on stripe i.
func (c *Counter) Begin(i int, k Kind) { c.stripe[i&(Stripes-1)].begun[k&1].Add(1) }

// End counts one piece of work of kind k as ended, on stripe i.
func (c *Counter) End(i int, k Kind) { c.stripe[i&(Stripes-1)].ended[k&1].Add(1) }

// Snapshot returns the work in flight of kind 0 and of kind 1; see Counter
// for what a zero means.
func (c *Counter) Snapshot() (k0, k1 int64) {
	var e0, e1 int64
	for i := range c.stripe {
		e0 += c.stripe[i].ended[0].Load()
		e1 += c.stripe[i].ended[1].Load()
	}
	for i := range c.stripe {
		k0 += c.stripe[i].begun[0].Load()
		k1 += c.stripe[i].begun[1].Load()
	}
	return k0 - e0, k1 - e1
}
