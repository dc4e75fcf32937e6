package grpcdrain

import (
	"math/rand/v2"
	"sync/atomic"
)

// cacheLine is padding against false sharing (two 64-byte lines: the
// adjacent-line prefetcher pairs them).
const cacheLine = 128

// stripes is the number of stripes of the in-flight counter.
const stripes = 16

// kind is what an in-flight entry counts: a unary call or a stream.
type kind int

const (
	call kind = iota
	stream
)

// inFlight counts running handlers, striped so that concurrent calls on
// different cores rarely write the same cache line. Each stripe holds
// monotonic counts of begun and ended calls and streams, never a signed
// level: a call may begin and end on any stripe, and the counts are read as
// "ended first, then begun" (see snapshot), which makes a zero result mean
// that at one instant nothing ran.
type inFlight struct {
	stripe [stripes]struct {
		begun [2]atomic.Int64 // by kind
		ended [2]atomic.Int64
		_     [cacheLine - 32]byte
	}
}

// pick returns a stripe for one call: the runtime's per-thread random
// source, which costs a few nanoseconds, takes no lock and does not
// allocate.
func pick() int { return int(rand.Uint32() >> 28) }

func (c *inFlight) begin(i int, k kind) { c.stripe[i].begun[k].Add(1) }
func (c *inFlight) end(i int, k kind)   { c.stripe[i].ended[k].Add(1) }

// snapshot returns the calls and streams in flight. It reads every ended
// count before any begun count. A handler that ended (and was counted as
// ended) began before that read, hence before the begun counts were read, so
// neither result is ever negative; and if both are zero, nothing was running
// at the instant between the two passes: any handler running then had begun
// before the second pass (counted as begun) and not ended before the first
// (not counted as ended).
func (c *inFlight) snapshot() (calls, streams int64) {
	var endedCalls, endedStreams int64
	for i := range c.stripe {
		endedCalls += c.stripe[i].ended[call].Load()
		endedStreams += c.stripe[i].ended[stream].Load()
	}
	for i := range c.stripe {
		calls += c.stripe[i].begun[call].Load()
		streams += c.stripe[i].begun[stream].Load()
	}
	return calls - endedCalls, streams - endedStreams
}
