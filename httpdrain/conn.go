package httpdrain

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// Connection phases. A connection is busy (holds AwaitIdle) in phNew,
// phReading, phActive and phHijacked.
const (
	phNew      int32 = iota // accepted; no request seen yet
	phReading               // HTTP/1: request bytes arrived, request not yet handled
	phActive                // HTTP/1: request in progress; HTTP/2: streams open
	phIdle                  // HTTP/1: between requests, no byte of a next request read
	phH2Idle                // HTTP/2: no open stream
	phHijacked              // taken over by a handler (WebSocket); not yet closed
	phClosing               // closed by httpdrain as idle; awaiting net/http's StateClosed
	phClosed
)

func busyPhase(p int32) bool {
	return p == phNew || p == phReading || p == phActive || p == phHijacked
}

func closedPhase(p int32) bool { return p == phClosing || p == phClosed }

// errTLSListener is returned by Serve when the listener yields *tls.Conn.
var errTLSListener = errors.New("httpdrain: the listener returned a *tls.Conn: pass a plain listener and set http.Server.TLSConfig; httpdrain serves TLS itself")

// listener wraps the caller's listener so every connection is a
// *trackedConn: its phase record, with no map lookup per request.
type listener struct {
	net.Listener
	s *Server
}

func (l *listener) Accept() (net.Conn, error) {
	nc, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	if _, ok := nc.(*tls.Conn); ok {
		_ = nc.Close()
		return nil, errTLSListener
	}
	c := &trackedConn{Conn: nc, s: l.s, tls: l.s.useTLS}
	l.s.track(c)
	return c, nil
}

// Close is a no-op when httpdrain closed the listener already; it keeps
// net/http's own deferred close from reporting an error.
func (l *listener) Close() error {
	err := l.Listener.Close()
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}

// trackedConn is one accepted connection and its drain record. net/http,
// crypto/tls and hijacking handlers see it as the net.Conn.
type trackedConn struct {
	net.Conn
	s   *Server
	tls bool // served with TLS: handshake bytes are not request bytes

	phase atomic.Int32
	h2    atomic.Bool // handed to the HTTP/2 server
	// hijackedReq is set when the current request hijacked this connection
	// and cleared when its handler returns (see tracker.done).
	hijackedReq atomic.Bool

	// Writes started and finished: after the drain, an idle HTTP/2
	// connection is closed only once its writes have been quiet for a while.
	wstart, wdone atomic.Int64

	grace     *time.Timer             // guarded by s.mu
	cancel    context.CancelCauseFunc // the connection context's; guarded by s.mu
	seenWrite int64                   // wstart at the last linger check; Serve's goroutine only
}

// Read marks the arrival of request bytes on an idle (or, without TLS, a
// new) HTTP/1 connection, so that it is no longer closed as idle. net/http's
// ConnState stays StateIdle until the whole request header is read; this
// marks the first byte.
func (c *trackedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		switch c.phase.Load() {
		case phIdle:
			c.move(phIdle, phReading)
		case phNew:
			if !c.tls {
				c.move(phNew, phReading)
			}
		}
	}
	return n, err
}

// Write counts writes for the post-drain quiet check.
func (c *trackedConn) Write(p []byte) (int, error) {
	c.wstart.Add(1)
	n, err := c.Conn.Write(p)
	c.wdone.Add(1)
	return n, err
}

// Close closes the connection. For a hijacked connection this is the end of
// its in-flight life: net/http reports no StateClosed for it.
func (c *trackedConn) Close() error {
	err := c.Conn.Close()
	if c.phase.Load() == phHijacked {
		c.closed()
	}
	return err
}

// ReadFrom keeps net/http's sendfile/splice path when the inner conn has one.
func (c *trackedConn) ReadFrom(r io.Reader) (int64, error) {
	c.wstart.Add(1)
	defer c.wdone.Add(1)
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(writerOnly{c.Conn}, r)
}

// CloseWrite keeps net/http's TCP half-close (closeWriteAndWait).
func (c *trackedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

type writerOnly struct{ io.Writer }

// move changes the phase from -> to if it is still from, keeping the busy
// count in step. It reports whether it did.
func (c *trackedConn) move(from, to int32) bool {
	if !c.phase.CompareAndSwap(from, to) {
		return false
	}
	c.s.busyChanged(busyPhase(from), busyPhase(to))
	if closedPhase(to) && !closedPhase(from) {
		c.s.connClosed()
	}
	return true
}

// set moves to `to` from whatever the phase is, unless closed; it returns
// the previous phase.
func (c *trackedConn) set(to int32) int32 {
	for {
		from := c.phase.Load()
		if from == phClosed || from == to {
			return from
		}
		if c.move(from, to) {
			return from
		}
	}
}

// closeIf closes the connection if it is still in phase from. This is the
// only way httpdrain closes a connection before the drain deadline: the
// compare-and-swap makes the decision atomic with respect to Read noticing
// request bytes, so a connection whose next request has begun to arrive is
// never closed as idle. (Bytes still in the network when the decision is made
// are the HTTP/1.1 race no server can close.)
func (c *trackedConn) closeIf(from int32) bool {
	if !c.move(from, phClosing) {
		return false
	}
	_ = c.Conn.Close()
	return true
}

// closed records the end of the connection.
func (c *trackedConn) closed() {
	from := c.set(phClosed)
	if from == phClosed {
		return
	}
	if from == phHijacked {
		c.s.hijacked.Add(-1)
		c.s.wake.Notify()
	}
	c.s.untrack(c)
}

// connOf finds the *trackedConn behind the net.Conn that net/http hands to
// ConnState, ConnContext and TLSNextProto: the conn itself, a *tls.Conn over
// it, or net/http's stand-in *tls.Conn for unencrypted HTTP/2.
func connOf(nc net.Conn) *trackedConn {
	switch c := nc.(type) {
	case *trackedConn:
		return c
	case *tls.Conn:
		switch u := c.NetConn().(type) {
		case *trackedConn:
			return u
		case interface{ UnencryptedNetConn() net.Conn }:
			t, _ := u.UnencryptedNetConn().(*trackedConn)
			return t
		}
	}
	return nil
}

// connState is installed as http.Server.ConnState; it calls the user's hook
// afterwards.
func (s *Server) connState(nc net.Conn, st http.ConnState) {
	if c := connOf(nc); c != nil {
		switch st {
		case http.StateActive:
			c.set(phActive)
		case http.StateIdle:
			if c.h2.Load() {
				c.set(phH2Idle)
			} else {
				c.set(phIdle)
				if s.phase.Reached(closed) {
					// The response went out without Connection: close (it began
					// before the drain); the window is over, so close it now.
					c.closeIf(phIdle)
				}
			}
		case http.StateHijacked:
			c.set(phHijacked)
			c.hijackedReq.Store(true)
			s.hijackedInHandler.Add(1)
			s.hijacked.Add(1)
		case http.StateClosed:
			c.closed()
		}
	}
	if s.userConnState != nil {
		s.userConnState(nc, st)
	}
}
