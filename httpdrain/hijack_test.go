package httpdrain_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
)

// A WebSocket (a hijacked connection) gets the drain signal at t0, sends
// close code 1001 (going away) and ends; it is counted as hijacked, not also
// as a request, while open, and the drain waits for it.
func TestWebSocketGoingAway(t *testing.T) {
	handlerDone := make(chan struct{})
	ws := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(handlerDone)
		c, brw, err := wsUpgrade(w, r)
		if err != nil {
			t.Errorf("upgrade: %v", err)
			return
		}
		defer c.Close() // returning closes the hijacked connection
		drain := httpdrain.Draining(r.Context())
		msgs := make(chan string)
		go func() { // echo loop; ends when the connection closes
			defer close(msgs)
			for {
				op, p, err := wsRead(brw)
				if err != nil || op != wsText {
					return
				}
				msgs <- string(p)
			}
		}()
		for {
			select {
			case m, ok := <-msgs:
				if !ok {
					return
				}
				if err := wsWrite(c, wsText, []byte("echo "+m), false); err != nil {
					return
				}
			case <-drain:
				// Going away: a close frame with status 1001.
				_ = wsWrite(c, wsClose, []byte{1001 >> 8, 1001 & 0xff}, false)
				return
			}
		}
	})
	in := start(t, timings(300*time.Millisecond, 5*time.Second), ws, nil)

	conn, br, err := wsDial(in.addr, "/ws")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := wsWrite(conn, wsText, []byte("hi"), true); err != nil {
		t.Fatal(err)
	}
	if op, got, err := wsRead(br); err != nil || op != wsText || string(got) != "echo hi" {
		t.Fatalf("echo: opcode %d %q %v", op, got, err)
	}
	if f := in.hs.InFlight(); f.Hijacked != 1 || f.Requests != 0 {
		t.Fatalf("in flight %+v, want 1 hijacked, 0 requests", f)
	}
	t0 := time.Now()
	if err := in.lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	op, payload, err := wsRead(br)
	if err != nil {
		t.Fatalf("reading the close frame: %v", err)
	}
	if op != wsClose {
		t.Fatalf("frame opcode %d, want close", op)
	}
	if len(payload) < 2 || int(payload[0])<<8|int(payload[1]) != 1001 {
		t.Fatalf("close payload %v, want status 1001", payload)
	}
	if d := time.Since(t0); d > 200*time.Millisecond {
		t.Fatalf("close frame %s after drain start", d)
	}
	<-handlerDone
	waitFor(t, time.Second, "hijacked connection accounted closed", func() bool { return in.hs.InFlight().Hijacked == 0 })
	if err := in.wait(5 * time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// A hijacked connection whose handler ignores the drain signal is waited for
// until drain.timeout, then closed and counted once.
func TestHijackedIgnoringDrainIsCut(t *testing.T) {
	handlerErr := make(chan error, 1)
	in := start(t, timings(0, 500*time.Millisecond), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			handlerErr <- err
			return
		}
		defer c.Close()
		brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: raw\r\nConnection: Upgrade\r\n\r\n")
		brw.Flush()
		_, err = io.Copy(io.Discard, brw) // until the connection is cut
		handlerErr <- err
	}), nil)
	conn, err := net.Dial("tcp", in.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	io.WriteString(conn, "GET /raw HTTP/1.1\r\nHost: x\r\nUpgrade: raw\r\nConnection: Upgrade\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	if f := in.hs.InFlight(); f.Hijacked != 1 || f.Requests != 0 {
		t.Fatalf("in flight %+v", f)
	}
	in.cancel()
	err = in.wait(5 * time.Second)
	if exitCode(err) != 1 {
		t.Fatalf("Run: %v, want exit code 1", err)
	}
	tl, _ := in.lc.Timeline()
	if tl.ForceClosed != 1 {
		t.Fatalf("force-closed %d, want 1", tl.ForceClosed)
	}
	if tl.InFlightAtClose != (lifecycle.InFlight{Hijacked: 1}) {
		t.Fatalf("in flight at close %+v", tl.InFlightAtClose)
	}
	select {
	case err := <-handlerErr:
		if err == nil {
			t.Fatal("hijacked handler's read ended without error")
		}
	case <-time.After(2 * time.Second):
		t.Fatal("hijacked handler still running after force-close")
	}
	if _, err := conn.Read(make([]byte, 1)); err == nil {
		t.Fatal("client connection still open")
	}
}

// Cancelling Run's context (as a signal would) starts the drain, but does not
// cancel the contexts of requests in flight: they finish normally.
func TestRequestContextSurvivesDrainStart(t *testing.T) {
	type seen struct {
		errAtT0, errAfterClose error
		draining               bool
	}
	result := make(chan seen, 1)
	started := make(chan struct{})
	var in *instance
	var once sync.Once
	in = start(t, timings(200*time.Millisecond, 5*time.Second), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(started) })
		<-httpdrain.Draining(r.Context())
		var s seen
		s.draining = true
		s.errAtT0 = r.Context().Err()
		for r.Context().Err() == nil { // poll until the listeners have closed
			if _, ok := in.steps.Time(lifecycle.StepListenersClosed); ok {
				break
			}
			time.Sleep(time.Millisecond)
		}
		s.errAfterClose = r.Context().Err()
		result <- s
		io.WriteString(w, "done")
	}), nil)
	respc := make(chan error, 1)
	go func() {
		resp, err := http.Get(in.url("/"))
		if err == nil {
			var b []byte
			b, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && string(b) != "done" {
				err = errors.New("body " + string(b))
			}
		}
		respc <- err
	}()
	<-started
	in.cancel() // the "signal"
	s := <-result
	if s.errAtT0 != nil || s.errAfterClose != nil {
		t.Fatalf("request context cancelled: at t0 %v, after listener close %v", s.errAtT0, s.errAfterClose)
	}
	if err := <-respc; err != nil {
		t.Fatalf("request failed: %v", err)
	}
	if err := in.wait(5 * time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if d := httpdrain.Draining(context.Background()); d != nil {
		t.Fatal("Draining of a foreign context is not nil")
	}
}

// Force-close reporting over HTTP/1.1 and HTTP/2 on one TLS server: two stuck
// HTTP/1.1 requests, two stuck HTTP/2 streams and one hijacked connection are
// cut at drain.timeout and reported as 5.
func TestForceCloseCountsEverything(t *testing.T) {
	cert, pool := selfSigned(t)
	var started sync.WaitGroup
	started.Add(5)
	in := start(t, timings(0, 500*time.Millisecond), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hijack" {
			c, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			started.Done()
			io.Copy(io.Discard, c)
			return
		}
		w.WriteHeader(http.StatusOK)
		http.NewResponseController(w).Flush()
		started.Done()
		<-r.Context().Done()
	}), func(srv *http.Server) {
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
	})
	h1 := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}}
	h2 := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
	defer h1.CloseIdleConnections()
	defer h2.CloseIdleConnections()
	var clients sync.WaitGroup
	get := func(tr *http.Transport, path string, proto int) {
		defer clients.Done()
		resp, err := (&http.Client{Transport: tr}).Get("https://" + in.addr + path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return
		}
		if resp.ProtoMajor != proto {
			t.Errorf("%s over HTTP/%d", path, resp.ProtoMajor)
		}
		io.Copy(io.Discard, resp.Body) // ends when cut
		resp.Body.Close()
	}
	clients.Add(4)
	go get(h1, "/a", 1)
	go get(h1, "/b", 1)
	go get(h2, "/c", 2)
	go get(h2, "/d", 2)
	hj, err := tls.Dial("tcp", in.addr, &tls.Config{RootCAs: pool})
	if err != nil {
		t.Fatal(err)
	}
	defer hj.Close()
	io.WriteString(hj, "GET /hijack HTTP/1.1\r\nHost: x\r\n\r\n")
	started.Wait()
	if f := in.hs.InFlight(); f != (lifecycle.InFlight{Requests: 4, Hijacked: 1}) {
		t.Fatalf("in flight %+v", f)
	}
	in.cancel()
	err = in.wait(5 * time.Second)
	if exitCode(err) != 1 {
		t.Fatalf("Run: %v", err)
	}
	clients.Wait()
	tl, _ := in.lc.Timeline()
	if tl.ForceClosed != 5 {
		t.Fatalf("force-closed %d, want 5", tl.ForceClosed)
	}
	if tl.InFlightAtClose != (lifecycle.InFlight{Requests: 4, Hijacked: 1}) {
		t.Fatalf("in flight at close %+v", tl.InFlightAtClose)
	}
	waitFor(t, 2*time.Second, "nothing in flight", func() bool { return in.hs.InFlight() == lifecycle.InFlight{} })
}
