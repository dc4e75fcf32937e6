package drill

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"
)

// TestOutageProxyCutsAndRestores: the proxy forwards until cut, then
// resets the open connection and every new one, and forwards again once
// restored.
func TestOutageProxyCutsAndRestores(t *testing.T) {
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	defer func() { _ = echo.Close(); <-done }()
	p, err := newOutageProxy(echo.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	roundTrip := func(c net.Conn) error {
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Write([]byte("ping\n")); err != nil {
			return err
		}
		_, err := bufio.NewReader(c).ReadString('\n')
		return err
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := roundTrip(c); err != nil {
		t.Fatalf("before the cut: %v", err)
	}
	p.cut()
	if err := roundTrip(c); err == nil {
		t.Errorf("the open connection still answered after the cut")
	}
	if c2, err := net.Dial("tcp", p.Addr()); err == nil {
		if roundTrip(c2) == nil {
			t.Errorf("a new connection was answered during the outage")
		}
		c2.Close()
	}
	p.restore()
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if err := roundTrip(c3); err != nil {
		t.Errorf("after the restore: %v", err)
	}
}
