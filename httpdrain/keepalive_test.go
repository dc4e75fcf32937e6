package httpdrain_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// connLog records, per server connection, what the server did with it.
type connLog struct {
	mu    sync.Mutex
	conns map[net.Conn]*connRecord
}

type connRecord struct {
	open          bool
	inHandler     int  // handlers running on it now
	closedMidReq  bool // StateClosed while a handler ran
	servedAfterT0 int  // responses completed after the drain began
}

type connRecKey struct{}

func newConnLog() *connLog { return &connLog{conns: map[net.Conn]*connRecord{}} }

func (l *connLog) configure(srv *http.Server) {
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		l.mu.Lock()
		defer l.mu.Unlock()
		r := l.conns[c]
		if r == nil {
			r = &connRecord{}
			l.conns[c] = r
		}
		switch st {
		case http.StateNew:
			r.open = true
		case http.StateClosed, http.StateHijacked:
			r.open = false
			if r.inHandler > 0 {
				r.closedMidReq = true
			}
		}
	}
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, connRecKey{}, c)
	}
}

// openConns returns the connections open now.
func (l *connLog) openConns() []net.Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	var cs []net.Conn
	for c, r := range l.conns {
		if r.open {
			cs = append(cs, c)
		}
	}
	return cs
}

func (l *connLog) handler(draining *atomic.Bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, _ := r.Context().Value(connRecKey{}).(net.Conn)
		l.mu.Lock()
		rec := l.conns[c]
		rec.inHandler++
		l.mu.Unlock()
		h(w, r)
		l.mu.Lock()
		rec.inHandler--
		if draining.Load() {
			rec.servedAfterT0++
		}
		l.mu.Unlock()
	}
}

// 50 concurrent POST loops on keep-alive connections across a drain with a
// 1 s window (each loop must see a response within it, also on a busy
// machine), until every loop has moved: zero client errors; every connection open at drain
// start is closed by the server after a response, none mid-request.
func TestKeepAliveLoopsAcrossDrain(t *testing.T) {
	const loops = 50
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		io.WriteString(w, "other")
	}))
	defer other.Close()

	log := newConnLog()
	var draining atomic.Bool
	in := start(t, timings(time.Second, time.Second), log.handler(&draining, func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			t.Errorf("server read body: %v", err)
		}
		time.Sleep(time.Millisecond) // some work
		io.WriteString(w, "drained")
	}), log.configure)

	var (
		errs     atomic.Int64
		firstErr atomic.Value
		moved    atomic.Int64 // loops that moved because of Connection: close
		toA      atomic.Int64
	)
	// The loops run until every loop has moved (or failed): on a busy
	// machine that takes longer than on an idle one, and nothing here
	// depends on a fixed duration.
	var stopLoops atomic.Bool
	defer stopLoops.Store(true) // also when the test fails early
	var wg sync.WaitGroup
	for i := 0; i < loops; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr := &http.Transport{MaxIdleConnsPerHost: 1}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr, Timeout: 5 * time.Second}
			target := in.url("/post")
			for !stopLoops.Load() {
				resp, err := c.Post(target, "text/plain", strings.NewReader("payload"))
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err)
					return
				}
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err)
					return
				}
				if target != other.URL {
					toA.Add(1)
					if resp.Close {
						moved.Add(1)
						target = other.URL
					}
				}
			}
		}()
	}

	// Start the drain once all loops are on their keep-alive connections.
	waitFor(t, 10*time.Second, "50 open connections", func() bool { return len(log.openConns()) >= loops })
	waitFor(t, 10*time.Second, "500 requests before the drain", func() bool { return toA.Load() >= 500 })
	atT0 := log.openConns()
	draining.Store(true)
	if err := in.lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); moved.Load()+errs.Load() < loops && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond) // the assertions below say what is missing
	}
	stopLoops.Store(true)
	wg.Wait()
	if err := in.wait(5 * time.Second); err != nil {
		t.Fatalf("Run: %v", err)
	}

	if n := errs.Load(); n != 0 {
		t.Fatalf("%d client errors, first: %v", n, firstErr.Load())
	}
	if moved.Load() != loops {
		t.Fatalf("%d of %d loops were told Connection: close", moved.Load(), loops)
	}
	if len(atT0) < loops {
		t.Fatalf("only %d connections open at drain start", len(atT0))
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, c := range atT0 {
		r := log.conns[c]
		switch {
		case r.open:
			t.Errorf("connection %s open at drain start is still open", c.RemoteAddr())
		case r.closedMidReq:
			t.Errorf("connection %s closed mid-request", c.RemoteAddr())
		case r.servedAfterT0 == 0:
			t.Errorf("connection %s closed without a response after drain start", c.RemoteAddr())
		}
	}
	tl, _ := in.lc.Timeline()
	if tl.LateArrivals < loops {
		t.Errorf("late arrivals %d < %d", tl.LateArrivals, loops)
	}
	t.Logf("requests to the drained instance: %d; late arrivals %d; connections at t0 %d", toA.Load(), tl.LateArrivals, len(atT0))
}
