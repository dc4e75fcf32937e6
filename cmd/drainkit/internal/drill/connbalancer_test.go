package drill

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// nameServer is a backend on a loopback port that answers each line it
// reads with its name and the line, until the client or the test ends the
// connection.
func nameServer(t *testing.T, name string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := io.WriteString(c, name+" "+line); err != nil {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	return ln.Addr().String()
}

// backendList is a connBalancer's list that the test changes.
type backendList struct {
	mu    sync.Mutex
	addrs []string
}

func (l *backendList) set(addrs ...string) {
	l.mu.Lock()
	l.addrs = addrs
	l.mu.Unlock()
}

func (l *backendList) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.addrs
}

// ask sends line on c and returns the answer, bounded by 10 s (a hang, not
// a timing condition).
func ask(t *testing.T, c net.Conn, r *bufio.Reader, line string) (string, error) {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	answer, err := r.ReadString('\n')
	if len(answer) > 0 {
		answer = answer[:len(answer)-1]
	}
	return answer, err
}

func dialBalancer(t *testing.T, b *connBalancer) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", b.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c, bufio.NewReader(c)
}

// A connection the balancer hands to a listed instance that no longer
// listens is reset at once, as a SYN DNAT'd to a closed port is refused;
// the next connection goes to the next instance in the list.
func TestConnBalancerResetsWhenTheBackendRefuses(t *testing.T) {
	list := &backendList{}
	live := nameServer(t, "live")
	list.set(closedAddr(t), live)
	b, err := newConnBalancer(list.get)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	// The reset may meet the client's connect (on loopback it often
	// arrives before connect returns, as a refused SYN would), its write or
	// its read; either way no answer, and not the deadline.
	var answer string
	c, err := net.Dial("tcp", b.Addr())
	if err == nil {
		defer c.Close()
		answer, err = ask(t, c, bufio.NewReader(c), "hello")
	}
	var ne net.Error
	if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
		t.Fatalf("to the closed instance: answer %q, err %v; want the connection reset", answer, err)
	}

	c2, r2 := dialBalancer(t, b)
	if answer, err := ask(t, c2, r2, "hello"); err != nil || answer != "live hello" {
		t.Errorf("next connection: %q, %v; want the live instance's answer", answer, err)
	}
	if got := b.Backend(c2.LocalAddr()); got != live {
		t.Errorf("Backend of the second connection: %q, want %q", got, live)
	}
}

// A list change applies to the connections accepted after it: a spliced
// connection stays with its instance.
func TestConnBalancerListChangeAppliesToNewConnections(t *testing.T) {
	a, bAddr := nameServer(t, "a"), nameServer(t, "b")
	list := &backendList{}
	list.set(a)
	b, err := newConnBalancer(list.get)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	old, oldR := dialBalancer(t, b)
	if answer, err := ask(t, old, oldR, "1"); err != nil || answer != "a 1" {
		t.Fatalf("first connection: %q, %v; want a's answer", answer, err)
	}
	list.set(bAddr)
	if answer, err := ask(t, old, oldR, "2"); err != nil || answer != "a 2" {
		t.Errorf("first connection after the change: %q, %v; want a's answer still", answer, err)
	}
	c, r := dialBalancer(t, b)
	if answer, err := ask(t, c, r, "3"); err != nil || answer != "b 3" {
		t.Errorf("new connection after the change: %q, %v; want b's answer", answer, err)
	}
	if got := b.Backend(old.LocalAddr()); got != a {
		t.Errorf("Backend of the first connection: %q, want %q", got, a)
	}
	if got := b.Backend(c.LocalAddr()); got != bAddr {
		t.Errorf("Backend of the new connection: %q, want %q", got, bAddr)
	}
}

// Close stops the listener, ends every spliced connection (the client sees
// it end) and leaves no goroutine behind.
func TestConnBalancerCloseEndsEverything(t *testing.T) {
	a := nameServer(t, "a")
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	b, err := newConnBalancer(func() []string { return []string{a} })
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", b.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if answer, err := ask(t, c, bufio.NewReader(c), "x"); err != nil || answer != "a x" {
			t.Fatalf("before Close: %q, %v", answer, err)
		}
		conns = append(conns, c)
	}
	addr := b.Addr()
	b.Close()
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		if err == nil || (errors.As(err, &ne) && ne.Timeout()) {
			t.Errorf("connection %d after Close: read err %v, want it ended", i, err)
		}
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		_ = c.Close()
		t.Errorf("the balancer's port still accepts after Close")
	}
	if got := b.Backend(conns[0].LocalAddr()); got != "" {
		t.Errorf("Backend after Close: %q, want none", got)
	}
}
