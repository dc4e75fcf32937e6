package httpdrain

import (
	"net/http"
	"sync/atomic"
	"unsafe"
)

// cacheLine is padding against false sharing (two 64-byte lines: the
// adjacent-line prefetcher pairs them).
const cacheLine = 128

// shards is the number of stripes of the in-flight request counter.
const shards = 16

// requestCounter counts running handlers, striped so that concurrent requests
// on different cores rarely write the same cache line. A request adds and
// subtracts on the same stripe (chosen from its *http.Request's address), so
// every stripe stays >= 0.
type requestCounter struct {
	stripe [shards]struct {
		n atomic.Int64
		_ [cacheLine - 8]byte
	}
}

// stripeOf picks r's stripe: a Fibonacci hash of its address.
func stripeOf(r *http.Request) int {
	return int(uint64(uintptr(unsafe.Pointer(r))) * 0x9E3779B97F4A7C15 >> 60)
}

func (c *requestCounter) add(i int, d int64) { c.stripe[i].n.Add(d) }

// sum reads the stripes one by one, so it is not an atomic snapshot: a
// request starting on a stripe already read while another ends on one not yet
// read can make it low. AwaitIdle therefore reads it before the busy
// connection count: a request can only start on a busy connection (HTTP/1.1:
// StateActive precedes the handler; HTTP/2: the stream opens first), which
// stays busy until the handler is done (unless the client reset the stream).
func (c *requestCounter) sum() int64 {
	var n int64
	for i := range c.stripe {
		n += c.stripe[i].n.Load()
	}
	return n
}
