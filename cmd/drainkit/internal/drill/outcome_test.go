package drill

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// rawServer accepts connections on loopback and hands each to fn after
// reading the request's header.
func rawServer(t *testing.T, fn func(c *net.TCPConn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			br := bufio.NewReader(c)
			for {
				line, err := br.ReadString('\n')
				if err != nil || line == "\r\n" {
					break
				}
			}
			fn(c.(*net.TCPConn))
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	return ln.Addr().String()
}

// closedAddr returns a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

func TestClassifyRealErrors(t *testing.T) {
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	cases := []struct {
		name string
		addr func(t *testing.T) string
		want Outcome
	}{
		{"ok", func(t *testing.T) string {
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("hi")) }))
			t.Cleanup(s.Close)
			return s.Listener.Addr().String()
		}, OK},
		{"5xx", func(t *testing.T) string {
			s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
			t.Cleanup(s.Close)
			return s.Listener.Addr().String()
		}, Status5xx},
		{"refused", closedAddr, Refused},
		{"reset", func(t *testing.T) string {
			return rawServer(t, func(c *net.TCPConn) { _ = c.SetLinger(0); _ = c.Close() })
		}, Reset},
		{"eof before the response", func(t *testing.T) string {
			return rawServer(t, func(c *net.TCPConn) { _ = c.Close() })
		}, EOF},
		{"eof in the body", func(t *testing.T) string {
			return rawServer(t, func(c *net.TCPConn) {
				_, _ = c.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort"))
				_ = c.Close()
			})
		}, EOF},
		{"timeout", func(t *testing.T) string {
			return rawServer(t, func(c *net.TCPConn) {
				go func() { <-hang; _ = c.Close() }()
			})
		}, Timeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newNaive(nil)
			defer c.Close()
			// Only the hanging server is meant to reach the deadline; the
			// others get one a starved process cannot reach before their
			// answer, which would classify them as a timeout.
			timeout := time.Minute
			if tc.want == Timeout {
				timeout = 300 * time.Millisecond
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			status, err := send(ctx, c.client, "http://"+tc.addr(t), Request{Method: "GET", Path: "/"})
			if got := Classify(status, err); got != tc.want {
				t.Fatalf("Classify(%d, %v) = %s, want %s", status, err, got, tc.want)
			}
		})
	}
}

func TestClassifyOther(t *testing.T) {
	if got := Classify(0, errors.New("something else")); got != Other {
		t.Fatalf("got %s, want other", got)
	}
	if got := Classify(0, fmt.Errorf("picking: %w", ErrNoEndpoint)); got != NoEndpoint {
		t.Fatalf("wrapped ErrNoEndpoint: got %s, want no_endpoint", got)
	}
	if got := Classify(404, nil); got != OK {
		t.Fatalf("404 without error: got %s, want ok (only 5xx is a server failure)", got)
	}
	for o := OK; o < numOutcomes; o++ {
		if o.String() == "unknown" || (o == OK) == o.Failed() {
			t.Fatalf("outcome %d: name %q, failed %v", o, o, o.Failed())
		}
	}
}
