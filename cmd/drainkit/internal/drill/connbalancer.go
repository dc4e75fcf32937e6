package drill

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// connBalancer is a connection-level load balancer on a loopback port, as
// kube-proxy is for a Kubernetes Service's ClusterIP: for each TCP
// connection it accepts it picks a backend, round robin over its list as
// the list is at that moment, dials it and splices the two connections in
// both directions, reading no byte of what they carry. Its list is the
// drill's discovery as a naive consumer sees it, late, as kube-proxy learns
// of endpoint changes late; so it may hand a new connection to an instance
// that has stopped listening: the dial fails and the accepted connection is
// reset at once, as a client's SYN DNAT'd to a closed port is refused. A
// list change affects only the connections accepted after it: a spliced
// connection stays with its backend until one side ends it.
type connBalancer struct {
	ln       net.Listener
	backends func() []string
	dialer   net.Dialer
	ctx      context.Context // cancelled by Close: ends the dials in progress
	cancel   context.CancelFunc
	next     atomic.Uint64 // round robin over backends
	wg       sync.WaitGroup

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{} // both ends of every splice, for Close
	routes map[string]string     // client's address (host:port) -> backend's
}

// balancerDialTimeout bounds the balancer's dial to a backend. On loopback a
// closed port refuses at once; the bound is for a backend that accepts
// nothing (a stopped process whose listen queue is full).
const balancerDialTimeout = time.Second

// newConnBalancer starts a connBalancer on 127.0.0.1 (a free port) whose
// backends (host:port each) are what backends returns when a connection
// arrives. Close stops it.
func newConnBalancer(backends func() []string) (*connBalancer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	b := &connBalancer{ln: ln, backends: backends, dialer: net.Dialer{Timeout: balancerDialTimeout},
		ctx: ctx, cancel: cancel, conns: map[net.Conn]struct{}{}, routes: map[string]string{}}
	b.wg.Go(b.serve)
	return b, nil
}

// Addr is the balancer's address (host:port), the one its clients dial.
func (b *connBalancer) Addr() string { return b.ln.Addr().String() }

// Backend returns the backend (host:port) of the spliced connection whose
// client end is at client, "" when there is none (any more).
func (b *connBalancer) Backend(client net.Addr) string {
	if client == nil {
		return ""
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.routes[client.String()]
}

// Close stops accepting, resets every spliced connection and returns when
// all of the balancer's goroutines have ended.
func (b *connBalancer) Close() {
	b.cancel()
	_ = b.ln.Close()
	b.mu.Lock()
	b.closed = true
	for c := range b.conns {
		resetConn(c)
	}
	b.mu.Unlock()
	b.wg.Wait()
}

func (b *connBalancer) serve() {
	for {
		c, err := b.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors or the like: wait a little, as
			// net/http's Server does, rather than spin.
			t := time.NewTimer(10 * time.Millisecond)
			select {
			case <-b.ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		b.wg.Go(func() { b.splice(c) })
	}
}

// splice connects c, an accepted connection, to the next backend, or
// resets it when there is none or the backend refuses.
func (b *connBalancer) splice(c net.Conn) {
	list := b.backends()
	if len(list) == 0 {
		resetConn(c)
		return
	}
	backend := list[(b.next.Add(1)-1)%uint64(len(list))]
	up, err := b.dialer.DialContext(b.ctx, "tcp", backend)
	if err != nil {
		resetConn(c)
		return
	}
	client := c.RemoteAddr().String()
	if !b.track(client, backend, c, up) {
		resetConn(c)
		resetConn(up)
		return
	}
	defer b.untrack(client, c, up)
	var wg sync.WaitGroup
	wg.Go(func() { pipe(up, c) })
	pipe(c, up)
	wg.Wait()
}

// track notes a splice for Backend and Close; false once Close has begun.
func (b *connBalancer) track(client, backend string, c, up net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.conns[c], b.conns[up] = struct{}{}, struct{}{}
	b.routes[client] = backend
	return true
}

func (b *connBalancer) untrack(client string, c, up net.Conn) {
	b.mu.Lock()
	delete(b.conns, c)
	delete(b.conns, up)
	delete(b.routes, client)
	b.mu.Unlock()
	_ = c.Close()
	_ = up.Close()
}

// pipe copies what src receives to dst until src ends. At a clean end (FIN)
// it half-closes dst, as the peer did; at an error (a reset, Close) it
// resets both, so that each side sees what it would see without the
// balancer.
func pipe(dst, src net.Conn) {
	if _, err := io.Copy(dst, src); err == nil {
		if tc, ok := dst.(*net.TCPConn); ok && tc.CloseWrite() == nil {
			return
		}
	}
	resetConn(dst)
	resetConn(src)
}
