package grpcdrain

import (
	"context"
	"net"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/peer"
)

// conn wraps each accepted connection. It carries the Server in its local
// address (see Addr and Draining) and lets a connection move to the next
// grpc.Server when the one it was handed to stopped before touching it.
type conn struct {
	net.Conn
	s     *Server
	local *Addr
	used  atomic.Bool // a byte was read or written: the connection belongs to its grpc.Server
}

func (c *conn) Read(p []byte) (int, error) {
	if !c.used.Load() {
		c.used.Store(true)
	}
	return c.Conn.Read(p)
}

func (c *conn) Write(p []byte) (int, error) {
	if !c.used.Load() {
		c.used.Store(true)
	}
	return c.Conn.Write(p)
}

// LocalAddr returns the connection's local address as an *Addr.
func (c *conn) LocalAddr() net.Addr { return c.local }

// Close closes the connection, unless no byte has been read from or written
// to it yet and another grpc.Server is accepting: then the connection is
// handed to that one instead. grpc-go closes, untouched, a connection that
// its Serve accepted just as GracefulStop began; the client has seen nothing
// of it, so the next generation can serve it as if it had just been accepted.
func (c *conn) Close() error {
	if !c.used.Load() {
		_ = c.Conn.SetDeadline(time.Time{}) // the next server sets its own
		if c.s.dispatch(c) {
			return nil
		}
	}
	return c.close()
}

// close closes the underlying connection for good.
func (c *conn) close() error {
	c.used.Store(true)
	c.s.untrack(c)
	return c.Conn.Close()
}

// Addr is the local address of a connection served by a grpcdrain Server,
// as grpc-go reports it in peer.Peer.LocalAddr (peer.FromContext) and to
// stats handlers. Network and String are those of the connection's own local
// address, which is the embedded Addr (a *net.TCPAddr for TCP): code that
// type-asserts peer.LocalAddr must unwrap it first. It carries the Server so
// that Draining can find the drain signal from a call's context without any
// allocation per call.
type Addr struct {
	net.Addr
	s *Server
}

// Draining returns a channel that is closed when the drain starts (the
// lifecycle's t0, when Server.LameDuck is called), for handlers that hold a
// call open: server-streaming and bidirectional streams, long polls,
// subscriptions. Such a handler selects on it, finishes what it is doing
// (e.g. sends a last message) and returns, so the client re-opens its stream
// on a new connection, which after the propagation window leads to another
// instance. A handler that ignores it runs until drain.timeout after the
// listeners close; then its connection is closed, its context is cancelled,
// the client sees codes.Unavailable and the stream is counted as
// force-closed.
//
// ctx must be the context of a call served by a grpcdrain Server, or one
// derived from it. For any other context Draining returns nil, and a receive
// from a nil channel blocks forever, so a select on it simply never fires.
// It costs a context lookup (peer.FromContext) and does not allocate.
//
// The drain does not cancel ctx: only the drain deadline does, by closing
// the connection.
func Draining(ctx context.Context) <-chan struct{} {
	if p, ok := peer.FromContext(ctx); ok {
		if a, ok := p.LocalAddr.(*Addr); ok {
			return a.s.phase.Done(lameDuck)
		}
	}
	return nil
}
