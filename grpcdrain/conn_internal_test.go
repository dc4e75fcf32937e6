package grpcdrain

import (
	"github.com/drainkit/drainkit/internal/syncx"
	"log/slog"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
)

func newTestServer(t *testing.T) *Server {
	t.Helper()
	lc, err := lifecycle.New(lifecycle.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return New(lc, ln, nil)
}

// A connection closed before anyone read or wrote a byte goes to the
// accepting generation instead; once used, or once the listeners are
// closed, Close closes it.
func TestUntouchedConnectionIsHandedOn(t *testing.T) {
	s := newTestServer(t)
	g := &generation{s: s, ch: make(chan *conn), done: make(chan struct{})}
	s.mu.Lock()
	s.cur = g
	s.mu.Unlock()

	server, client := net.Pipe()
	defer client.Close()
	c := &conn{Conn: server, s: s}
	if !s.track(c) {
		t.Fatal("track refused")
	}
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	var got *conn
	select {
	case got = <-g.ch:
	case <-time.After(2 * time.Second):
		t.Fatal("untouched connection was not handed on")
	}
	if got != c || <-closed != nil {
		t.Fatal("wrong connection or Close error")
	}
	go func() { _, _ = client.Write([]byte("x")) }()
	if _, err := c.Read(make([]byte, 1)); err != nil {
		t.Fatalf("handed-on connection was closed: %v", err)
	}

	// Used now: Close closes it.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Read(make([]byte, 1)); err == nil {
		t.Fatal("used connection still open after Close")
	}
	s.mu.Lock()
	n := len(s.conns)
	s.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d connections still tracked", n)
	}

	// Untouched but nothing accepts any more: closed.
	server2, client2 := net.Pipe()
	defer client2.Close()
	c2 := &conn{Conn: server2, s: s}
	s.closeListeners()
	if err := c2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := client2.Read(make([]byte, 1)); err == nil {
		t.Fatal("connection still open after Close with the listeners closed")
	}
}

// The in-flight snapshot never goes negative and counts by kind.
func TestInFlightSnapshot(t *testing.T) {
	var c syncx.Counter
	c.Begin(3, call)
	c.Begin(5, stream)
	c.Begin(7, stream)
	if calls, streams := c.Snapshot(); calls != 1 || streams != 2 {
		t.Fatalf("snapshot = %d, %d; want 1, 2", calls, streams)
	}
	c.End(9, call) // a call may end on another stripe than it began
	c.End(5, stream)
	if calls, streams := c.Snapshot(); calls != 0 || streams != 1 {
		t.Fatalf("snapshot = %d, %d; want 0, 1", calls, streams)
	}
}

// A connection offered to a generation that has been closed (rotated out)
// goes to its successor, never to it, even when Accept's select finds the
// hand-off and the close ready at once (it picks at random, so this repeats
// it): a retired window generation's connections get GOAWAY goAwayAfter
// after its close, so one it took later would be told to move too young.
func TestClosedGenerationHandsOnWhatItIsOffered(t *testing.T) {
	s := newTestServer(t)
	for range 64 {
		old := &generation{s: s, ch: make(chan *conn), done: make(chan struct{})}
		next := &generation{s: s, ch: make(chan *conn), done: make(chan struct{})}
		s.mu.Lock()
		s.cur = next
		s.mu.Unlock()
		_ = old.Close()

		server, client := net.Pipe()
		c := &conn{Conn: server, s: s}
		if !s.track(c) {
			t.Fatal("track refused")
		}
		got := make(chan net.Conn, 1)
		go func() {
			if nc, err := next.Accept(); err == nil {
				got <- nc
			}
		}()
		offered := make(chan struct{})
		go func() { // a dispatch that read s.cur just before the rotation
			defer close(offered)
			old.ch <- c
		}()
		// Until the offer is taken, each Accept finds the close ready, and
		// the offer too once the sender waits.
		for taken := false; !taken; {
			if nc, err := old.Accept(); err == nil {
				t.Fatalf("the closed generation accepted %v", nc)
			}
			select {
			case <-offered:
				taken = true
			default:
				runtime.Gosched()
			}
		}
		select {
		case nc := <-got:
			if nc != c {
				t.Fatal("the successor accepted another connection")
			}
		case <-time.After(time.Second):
			t.Fatal("the connection the closed generation was offered never reached its successor")
		}
		client.Close()
		_ = c.close()
		_ = next.Close()
	}
}
