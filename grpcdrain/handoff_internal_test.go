package grpcdrain

import (
	"context"
	"errors"
	"github.com/drainkit/drainkit/internal/syncx"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// trapListener makes grpc-go accept a connection after GracefulStop began:
// its Close (which GracefulStop calls after firing its quit event, before
// waiting for its serving goroutines) first returns c from the pending
// Accept, then waits until c has been served by someone.
type trapListener struct {
	addr    net.Addr
	c       *conn
	accept  chan net.Conn
	closed  chan struct{}
	once    sync.Once
	handled chan struct{}
	waiting chan struct{} // closed when Serve first calls Accept
	wOnce   sync.Once
}

func (l *trapListener) Accept() (net.Conn, error) {
	l.wOnce.Do(func() { close(l.waiting) })
	select {
	case c := <-l.accept:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *trapListener) Close() error {
	l.once.Do(func() {
		l.accept <- l.c
		<-l.handled
		close(l.closed)
	})
	return nil
}

func (l *trapListener) Addr() net.Addr { return l.addr }

// grpc-go closes, unread, a connection accepted as GracefulStop begins
// (grpc.Server.handleRawConn checks its quit event first). Such a
// connection must go to the next generation and be served there: a real
// client's call on it succeeds.
func TestConnAcceptedAsGracefulStopBeginsIsServedByTheNext(t *testing.T) {
	s := newTestServer(t)
	next := s.newGeneration(true)
	s.mu.Lock()
	s.startLocked(next)
	s.mu.Unlock()

	// A real TCP connection: client side for grpc's client, server side
	// wrapped as the Server would wrap it.
	pairLn, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pairLn.Close()
	clientSide, err := net.Dial("tcp", pairLn.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := pairLn.Accept()
	if err != nil {
		t.Fatal(err)
	}
	c := &conn{Conn: raw, s: s}
	c.local = &Addr{Addr: raw.LocalAddr(), s: s}
	if !s.track(c) {
		t.Fatal("track refused")
	}

	old := s.newGeneration(false)
	trap := &trapListener{addr: pairLn.Addr(), c: c, accept: make(chan net.Conn), closed: make(chan struct{}), handled: make(chan struct{}), waiting: make(chan struct{})}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = old.gs.Serve(trap)
	}()

	dialed := false
	cc, err := grpc.NewClient("passthrough:///trap",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) {
			if dialed {
				return nil, errors.New("only one connection in this test")
			}
			dialed = true
			return clientSide, nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()

	var release sync.Once
	defer release.Do(func() { close(trap.handled) })
	<-trap.waiting // Serve is accepting: GracefulStop will close trap
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		old.gs.GracefulStop()
	}()
	callErr := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
		callErr <- err
	}()
	if err := <-callErr; err != nil {
		t.Fatalf("call on a connection accepted as GracefulStop began: %v", err)
	}
	if !c.used.Load() {
		t.Fatal("the call succeeded, but not over the trapped connection")
	}
	release.Do(func() { close(trap.handled) })
	<-stopped
	<-served

	s.closeListeners() // GOAWAY to next; it stops when the client leaves
	cc.Close()
	if !syncx.WaitFor(&s.wg, 5*time.Second) {
		t.Fatal("the next generation did not stop")
	}
}
