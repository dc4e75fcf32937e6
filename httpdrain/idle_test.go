package httpdrain_test

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
)

// rawConn is a client HTTP/1.1 connection driven by hand.
type rawConn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t, c, bufio.NewReader(c)}
}

const rawRequest = "GET / HTTP/1.1\r\nHost: x\r\n\r\n"

func (r *rawConn) send(s string) {
	r.t.Helper()
	if _, err := io.WriteString(r.c, s); err != nil {
		r.t.Fatal(err)
	}
}

// response reads one response and reports whether it said Connection: close.
func (r *rawConn) response() (close bool) {
	r.t.Helper()
	_ = r.c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(r.br, nil)
	if err != nil {
		r.t.Fatalf("reading response: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		r.t.Fatalf("status %d", resp.StatusCode)
	}
	return resp.Close
}

// closedBy reports when the server closed the connection (EOF or reset),
// waiting up to d.
func (r *rawConn) closedBy(d time.Duration) (time.Time, bool) {
	_ = r.c.SetReadDeadline(time.Now().Add(d))
	_, err := r.br.ReadByte()
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return time.Time{}, false
	}
	return time.Now(), err != nil
}

// Idle keep-alive connections open at t0 stay usable through the window: a
// request on one is served with Connection: close; one left idle is closed
// when the window ends, not before; one on which a request has begun to
// arrive when the window ends is not closed until its request is served.
func TestIdleKeepAliveConnectionsAtDrainStart(t *testing.T) {
	const window = 300 * time.Millisecond
	in := start(t, timings(window, 5*time.Second), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}), nil)
	used, untouched, partial := dialRaw(t, in.addr), dialRaw(t, in.addr), dialRaw(t, in.addr)
	for _, c := range []*rawConn{used, untouched, partial} {
		c.send(rawRequest)
		if c.response() {
			t.Fatal("Connection: close before the drain")
		}
	}
	t0 := time.Now()
	in.drain()
	// During the window, a request on an idle keep-alive connection is served
	// and told to go.
	used.send(rawRequest)
	if !used.response() {
		t.Fatal("response during the window lacks Connection: close")
	}
	if _, ok := used.closedBy(time.Second); !ok {
		t.Fatal("connection not closed after its Connection: close response")
	}
	// Half a request on the third connection, still inside the window.
	partial.send("GET / HTTP/1.1\r\n")
	// The untouched one is closed when the window ends.
	at, ok := untouched.closedBy(5 * time.Second)
	if !ok {
		t.Fatal("idle connection not closed")
	}
	windowEnded, _ := in.steps.Time(lifecycle.StepWindowEnded)
	if at.Sub(t0) < window-20*time.Millisecond || windowEnded.IsZero() || at.Before(windowEnded) {
		t.Fatalf("idle connection closed %s after t0, before the window ended (%v)", at.Sub(t0), windowEnded)
	}
	// The partial request survives the window's end and is served.
	if _, ok := partial.closedBy(50 * time.Millisecond); ok {
		t.Fatal("connection with a request arriving was closed as idle")
	}
	partial.send("Host: x\r\n\r\n")
	if !partial.response() {
		t.Fatal("late response lacks Connection: close")
	}
	if err := in.wait(5 * time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// A connection accepted before the listener closed but without a request yet
// is given the new-connection grace: a request sent within it is served; a
// connection that stays silent is closed when the grace ends, cutting nothing.
func TestNewConnectionGrace(t *testing.T) {
	const grace = 300 * time.Millisecond
	in := start(t, timings(0, 5*time.Second), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}), nil, httpdrain.WithNewConnGrace(grace))
	late, silent := dialRaw(t, in.addr), dialRaw(t, in.addr)
	// Make sure both were accepted: a third connection's request is served
	// after theirs were queued in the accept backlog, in order.
	probe := dialRaw(t, in.addr)
	probe.send(rawRequest)
	probe.response()
	t0 := time.Now()
	in.drain()
	waitFor(t, time.Second, "listeners closed", func() bool {
		_, ok := in.steps.Time(lifecycle.StepListenersClosed)
		return ok
	})
	late.send(rawRequest)
	if !late.response() {
		t.Fatal("response lacks Connection: close")
	}
	at, ok := silent.closedBy(5 * time.Second)
	if !ok {
		t.Fatal("silent connection not closed")
	}
	if d := at.Sub(t0); d < grace-20*time.Millisecond || d > grace+300*time.Millisecond {
		t.Fatalf("silent connection closed %s after t0, want about %s", d, grace)
	}
	if err := in.wait(5 * time.Second); err != nil {
		t.Fatalf("Run: %v (nothing should be force-closed)", err)
	}
	tl, _ := in.lc.Timeline()
	if tl.ForceClosed != 0 {
		t.Fatalf("force-closed %d", tl.ForceClosed)
	}
}
