package nacos_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	gosync "sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
)

// TestNoRegistrationBehindTheRegistrarsBack: while the client cannot reach
// the server's gRPC port (the HTTP API answers), READY fails and says so;
// the instance, deregistered meanwhile, never appears once the gRPC port is
// reachable again. nacos-sdk-go keeps a registration whose call failed and
// sends it when it connects: a Deregister that took such a registration for
// none left the instance to appear after the drain's deregistration, until
// the connection closed.
func TestNoRegistrationBehindTheRegistrarsBack(t *testing.T) {
	const svc = "gated-svc"
	p := startGatedProxy(t)
	o := testOptions(t, svc, 18501)
	o.Addrs = []string{p.addr}
	r := newRegistrar(t, o)

	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	err := r.Sync(ctx, lifecycle.Transition{To: lifecycle.Ready, At: time.Now()})
	cancel()
	if err == nil {
		t.Fatal("Sync(READY) succeeded with the gRPC port unreachable")
	}
	t.Logf("Sync(READY) with the gRPC port unreachable: %v", err)
	// Without a connection the deregistration cannot reach the server
	// either, and fails at its deadline; what matters is what the SDK
	// sends once connected.
	dctx, dcancel := context.WithTimeout(context.Background(), time.Second)
	defer dcancel()
	t.Logf("Deregister without a connection: %v", r.Deregister(dctx))

	p.open.Store(true)
	// nacos-sdk-go reconnects within a few seconds and then sends what it
	// kept (its redo task runs every 3s); watch for twice that.
	deadline := time.Now().Add(8 * time.Second)
	for time.Now().Before(deadline) {
		l, err := adminList(svc)
		if err != nil {
			t.Fatal(err)
		}
		if in, ok := find(l, 18501); ok {
			t.Fatalf("registered after the deregistration, once the client connected: %+v", in)
		}
		time.Sleep(100 * time.Millisecond) // a poll interval, not a synchronisation
	}
}

// gatedProxy forwards a port pair to srv's: HTTP always, gRPC (port+1000)
// only once open is set; until then a gRPC connection is closed at once.
type gatedProxy struct {
	addr string
	open atomic.Bool
}

func startGatedProxy(t *testing.T) *gatedProxy {
	t.Helper()
	hl, gl := listenPortPair(t)
	p := &gatedProxy{addr: hl.Addr().String()}
	var wg gosync.WaitGroup
	var mu gosync.Mutex
	var conns []net.Conn
	track := func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	}
	serve := func(l net.Listener, to string, gated bool) {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if gated && !p.open.Load() {
				c.Close()
				continue
			}
			up, err := net.Dial("tcp", to)
			if err != nil {
				c.Close()
				continue
			}
			track(c)
			track(up)
			wg.Add(2)
			go func() { defer wg.Done(); _, _ = io.Copy(up, c); up.Close() }()
			go func() { defer wg.Done(); _, _ = io.Copy(c, up); c.Close() }()
		}
	}
	wg.Add(2)
	go serve(hl, srv.Addr, false)
	go serve(gl, "127.0.0.1:"+strconv.Itoa(srv.Port+1000), true)
	t.Cleanup(func() {
		err := errors.Join(hl.Close(), gl.Close())
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
		if err != nil {
			t.Log(err)
		}
	})
	return p
}
