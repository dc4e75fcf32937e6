package httpdrain_test

import (
	"crypto/tls"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
)

// rawH2 speaks just enough HTTP/2 (RFC 9113) on conn to see the server's
// frames: the client preface and an empty SETTINGS, then frames read one by
// one, SETTINGS and PING acknowledged, until GOAWAY. The standard library's
// HTTP/2 client does not show a GOAWAY received on an idle connection.
type rawH2 struct {
	conn net.Conn
}

// HTTP/2 frame types and flags the test handles (RFC 9113 section 6).
const (
	h2Settings  = 0x4
	h2Ping      = 0x6
	h2GoAway    = 0x7
	h2FlagAck   = 0x1
	h2ErrNoErr  = 0x0
	h2ClientPre = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
)

func newRawH2(t *testing.T, conn net.Conn) *rawH2 {
	t.Helper()
	r := &rawH2{conn}
	if _, err := io.WriteString(conn, h2ClientPre); err != nil {
		t.Fatal(err)
	}
	if err := r.writeFrame(h2Settings, 0, nil); err != nil {
		t.Fatal(err)
	}
	return r
}

// writeFrame writes one frame on stream 0.
func (r *rawH2) writeFrame(typ, flags byte, payload []byte) error {
	n := len(payload)
	hdr := []byte{byte(n >> 16), byte(n >> 8), byte(n), typ, flags, 0, 0, 0, 0}
	_, err := r.conn.Write(append(hdr, payload...))
	return err
}

// awaitGoAway reads frames until GOAWAY or d passes, and returns the
// GOAWAY's error code.
func (r *rawH2) awaitGoAway(d time.Duration) (errCode uint32, err error) {
	_ = r.conn.SetReadDeadline(time.Now().Add(d))
	var hdr [9]byte
	for {
		if _, err := io.ReadFull(r.conn, hdr[:]); err != nil {
			return 0, err
		}
		payload := make([]byte, int(hdr[0])<<16|int(hdr[1])<<8|int(hdr[2]))
		if _, err := io.ReadFull(r.conn, payload); err != nil {
			return 0, err
		}
		typ, flags := hdr[3], hdr[4]
		switch {
		case typ == h2Settings && flags&h2FlagAck == 0:
			_ = r.writeFrame(h2Settings, h2FlagAck, nil)
		case typ == h2Ping && flags&h2FlagAck == 0:
			_ = r.writeFrame(h2Ping, h2FlagAck, payload)
		case typ == h2GoAway:
			if len(payload) < 8 {
				return 0, fmt.Errorf("GOAWAY payload of %d bytes", len(payload))
			}
			return binary.BigEndian.Uint32(payload[4:8]), nil
		}
	}
}

type h2Setup struct {
	name      string
	configure func(t *testing.T, srv *http.Server) (client *http.Client, dialRaw func() net.Conn)
}

var h2Setups = []h2Setup{
	{"tls", func(t *testing.T, srv *http.Server) (*http.Client, func() net.Conn) {
		cert, pool := selfSigned(t)
		srv.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}}
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}
		return &http.Client{Transport: tr, Timeout: 10 * time.Second}, func() net.Conn {
			c, err := tls.Dial("tcp", srv.Addr, &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}})
			if err != nil {
				t.Fatal(err)
			}
			if p := c.ConnectionState().NegotiatedProtocol; p != "h2" {
				t.Fatalf("ALPN %q", p)
			}
			return c
		}
	}},
	{"h2c", func(t *testing.T, srv *http.Server) (*http.Client, func() net.Conn) {
		srv.Protocols = new(http.Protocols)
		srv.Protocols.SetHTTP1(true)
		srv.Protocols.SetUnencryptedHTTP2(true)
		tr := &http.Transport{Protocols: new(http.Protocols)}
		tr.Protocols.SetUnencryptedHTTP2(true)
		return &http.Client{Transport: tr, Timeout: 10 * time.Second}, func() net.Conn {
			c, err := net.Dial("tcp", srv.Addr)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
	}},
}

// HTTP/2 over TLS and h2c: idle connections get GOAWAY at the drain's start,
// requests during the window are served (on new connections), a stream in
// flight when the listener closes is waited for and completes, its context is
// not cancelled, and the drain ends as soon as it does.
func TestHTTP2(t *testing.T) {
	for _, setup := range h2Setups {
		t.Run(setup.name, func(t *testing.T) {
			release := make(chan struct{})
			slowStarted := make(chan struct{}, 1)
			var client *http.Client
			var dialRaw func() net.Conn
			scheme := "http"
			in := start(t, timings(300*time.Millisecond, 5*time.Second), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.ProtoMajor != 2 {
					t.Errorf("%s: request over HTTP/%d", r.URL.Path, r.ProtoMajor)
				}
				if r.URL.Path == "/slow" {
					if httpdrain.Draining(r.Context()) == nil {
						t.Error("no drain signal in an HTTP/2 request's context")
					}
					slowStarted <- struct{}{}
					<-release
					if err := r.Context().Err(); err != nil {
						t.Errorf("slow request's context: %v", err)
					}
				}
				io.WriteString(w, "ok")
			}), func(srv *http.Server) {
				// start() listens on its own; the raw dialer reads srv.Addr.
				client, dialRaw = setup.configure(t, srv)
				if srv.TLSConfig != nil {
					scheme = "https"
				}
			})
			in.srv.Addr = in.addr
			defer client.CloseIdleConnections()
			url := scheme + "://" + in.addr

			get := func(path string) error {
				resp, err := client.Get(url + path)
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				if resp.ProtoMajor != 2 {
					t.Errorf("response over HTTP/%d", resp.ProtoMajor)
				}
				_, err = io.Copy(io.Discard, resp.Body)
				return err
			}
			if err := get("/"); err != nil {
				t.Fatal(err)
			}
			raw := newRawH2(t, dialRaw())
			defer raw.conn.Close()
			if _, err := raw.awaitGoAway(50 * time.Millisecond); err == nil {
				t.Fatal("GOAWAY before the drain")
			}
			slowErr := make(chan error, 1)
			go func() { slowErr <- get("/slow") }()
			<-slowStarted

			t0 := time.Now()
			if err := in.lc.Drain("test"); err != nil {
				t.Fatal(err)
			}
			code, err := raw.awaitGoAway(2 * time.Second)
			goAwayAfter := time.Since(t0)
			if err != nil {
				t.Fatalf("idle HTTP/2 connection got no GOAWAY: %v", err)
			}
			if code != h2ErrNoErr {
				t.Fatalf("GOAWAY with error code %#x, want NO_ERROR", code)
			}
			if goAwayAfter > 250*time.Millisecond {
				t.Fatalf("GOAWAY %s after drain start, want it within the window", goAwayAfter)
			}
			// During the window: still served.
			for i := 0; i < 3; i++ {
				if err := get("/"); err != nil {
					t.Fatalf("request during the window: %v", err)
				}
			}
			// After the window, the in-flight stream is waited for.
			waitFor(t, 5*time.Second, "listeners closed", func() bool {
				_, ok := in.steps.Time(lifecycle.StepListenersClosed)
				return ok
			})
			if got := in.hs.InFlight().Requests; got != 1 {
				t.Fatalf("in flight after close: %d, want 1", got)
			}
			select {
			case <-in.runErr:
				t.Fatal("drain ended with a stream in flight")
			default:
			}
			releasedAt := time.Now()
			close(release)
			if err := <-slowErr; err != nil {
				t.Fatalf("in-flight stream failed: %v", err)
			}
			waitFor(t, 2*time.Second, "idle step", func() bool {
				_, ok := in.steps.Time(lifecycle.StepIdle)
				return ok
			})
			idleAt, _ := in.steps.Time(lifecycle.StepIdle)
			if d := idleAt.Sub(releasedAt); d > 100*time.Millisecond {
				t.Fatalf("idle %s after the last stream was released", d)
			}
			if err := in.wait(5 * time.Second); err != nil {
				t.Fatalf("Run: %v", err)
			}
			t.Logf("GOAWAY at t0+%s; idle %s after release; Run returned %s after release",
				goAwayAfter, idleAt.Sub(releasedAt), in.endAt.Sub(releasedAt))
		})
	}
}
