package drill

import (
	"context"
	"net"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
)

// writeTracker follows one request through net/http's client trace hooks,
// over every try (a consumer's retries and net/http's own), to tell which
// instance the request was written to and got no answer from: a request
// that may have reached a server and been lost there, as opposed to one that
// never left the consumer (a refused dial, a connection found reset before
// the write). Only such requests can fail without the consumer being able to
// resend them safely when they are not idempotent.
//
// "Written" means the kernel accepted at least one byte of the request on a
// connection dialled through ClientConfig.Dial (a countingConn). net/http's
// own WroteRequest hook cannot tell: it fires before the buffered request is
// flushed, so a write that then fails on a connection the peer had reset
// would count.
type writeTracker struct {
	mu       sync.Mutex
	tries    []try
	answered map[string]bool // addresses that sent a response byte
	// first is the first address the request was sent toward: a dial's
	// target (refused or not) or a pooled connection's peer.
	first string
}

// try is one use of a connection by the request.
type try struct {
	addr  string
	conn  *countingConn // nil when the consumer did not dial through Dial
	start int64         // conn's bytes written before this try
}

// trace returns ctx carrying the tracker's hooks.
func (w *writeTracker) trace(ctx context.Context) context.Context {
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		ConnectStart: func(_, addr string) { w.toward(addr) },
		GotConn: func(info httptrace.GotConnInfo) {
			t := try{addr: info.Conn.RemoteAddr().String()}
			w.toward(t.addr)
			if c, ok := info.Conn.(*countingConn); ok {
				t.conn, t.start = c, c.written.Load()
			}
			w.mu.Lock()
			w.tries = append(w.tries, t)
			w.mu.Unlock()
		},
		GotFirstResponseByte: func() {
			w.mu.Lock()
			if w.answered == nil {
				w.answered = map[string]bool{}
			}
			if n := len(w.tries); n > 0 {
				w.answered[w.tries[n-1].addr] = true
			}
			w.mu.Unlock()
		},
	})
}

// toward notes addr as the first address the request went toward, unless
// it already has one.
func (w *writeTracker) toward(addr string) {
	w.mu.Lock()
	if w.first == "" {
		w.first = addr
	}
	w.mu.Unlock()
}

// firstTry returns the first address the request was sent toward, "" for
// none.
func (w *writeTracker) firstTry() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.first
}

// unanswered returns the first address the request was written to that
// never answered, "" when there is none.
func (w *writeTracker) unanswered() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, t := range w.tries {
		if t.conn != nil && t.conn.written.Load() > t.start && !w.answered[t.addr] {
			return t.addr
		}
	}
	return ""
}

// countingConn counts the bytes the kernel accepted on a connection, so that
// writeTracker can tell a request that left the consumer from one that did
// not. net/http writes one request at a time on an HTTP/1 connection, so the
// count's growth during a try is that request's.
type countingConn struct {
	net.Conn
	written atomic.Int64
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.written.Add(int64(n))
	return n, err
}

// countingDialer returns a DialContext for ClientConfig.Dial that wraps d's
// connections in countingConn.
func countingDialer(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &countingConn{Conn: c}, nil
	}
}
