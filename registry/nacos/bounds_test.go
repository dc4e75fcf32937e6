package nacos_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	gosync "sync"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/nacos"
	"go.uber.org/goleak"
)

// TestBoundedAgainstSilentServer: against a server whose HTTP port and gRPC
// port (HTTP+1000) accept connections and never answer, Registrar.Close
// returns within close_timeout (plus a margin for a busy machine) and Watch
// returns promptly once its context ends; what nacos-sdk-go still does
// then (its calls take no context) ends once the server goes away, leaving
// no goroutine behind. Close took 8.5 s with close_timeout 1 s, and Watch
// 10 s after its context ended, while the SDK's client was being made (3
// connection attempts of 3 s each).
func TestBoundedAgainstSilentServer(t *testing.T) {
	const svc, margin = "silent-svc", 2 * time.Second
	// Stricter than TestMain: the SDK's connection goroutines (RpcClient.Start's)
	// end once its client is closed; only its UDP push receiver and its
	// logger's rotation outlive every client.
	leaks := []goleak.Option{goleak.IgnoreCurrent(), sdkGoroutines[0], sdkGoroutines[1]}
	bh := startSilentServer(t)

	o := testOptions(t, svc, 18601)
	o.Addrs = []string{bh.addr}
	o.CloseTimeout = time.Second
	r, err := nacos.New(o)
	if err != nil {
		t.Fatal(err)
	}
	made := nacos.SDKClientsMade()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	err = r.Sync(ctx, lifecycle.Transition{To: lifecycle.Ready, At: time.Now()})
	cancel()
	if err == nil {
		t.Fatal("Sync(READY) succeeded against a server that never answers")
	}
	eventually(t, 10*time.Second, "the registrar started making its SDK client", func() (bool, string) {
		return nacos.SDKClientsMade() > made, ""
	})
	start := time.Now()
	err = r.Close()
	took := time.Since(start)
	t.Logf("Close with close_timeout %s took %s: %v", o.CloseTimeout, took.Round(time.Millisecond), err)
	if took > o.CloseTimeout+margin {
		t.Errorf("Close took %s with close_timeout %s", took.Round(time.Millisecond), o.CloseTimeout)
	}
	if err == nil {
		t.Error("Close returned nil although the client's close went on in the background")
	}

	wctx, wcancel := context.WithCancel(context.Background())
	defer wcancel()
	views := make(chan registry.View, 16)
	returned := make(chan error, 1)
	made = nacos.SDKClientsMade()
	go func() {
		returned <- nacos.Watch(wctx, svc, nacos.WatchOptions{Server: nacos.Server{Addrs: []string{bh.addr}},
			ReadInterval: 200 * time.Millisecond, CallTimeout: 500 * time.Millisecond, SDKDir: t.TempDir()},
			func(v registry.View) { views <- v })
	}()
	select {
	case v := <-views:
		if v.Err == nil {
			t.Fatalf("first view without an error from a server that never answers: %+v", v)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no view from Watch within 30s")
	}
	// Past its first read Watch subscribes: it makes an SDK client.
	eventually(t, 10*time.Second, "Watch started making its subscription's SDK client", func() (bool, string) {
		return nacos.SDKClientsMade() > made, ""
	})
	wcancel()
	start = time.Now()
	select {
	case err := <-returned:
		took = time.Since(start)
		t.Logf("Watch returned %s after its context ended: %v", took.Round(time.Millisecond), err)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Watch returned %v, want context.Canceled", err)
		}
		if took > margin {
			t.Errorf("Watch returned %s after its context ended", took.Round(time.Millisecond))
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Watch still running 60s after its context ended")
	}

	// The server goes away: what still ran in the background ends.
	bh.close()
	took = eventually(t, 60*time.Second, "no goroutine left once the server is gone", func() (bool, string) {
		err := goleak.Find(leaks...)
		return err == nil, errString(err)
	})
	t.Logf("the SDK's goroutines ended %s after the server went away", took.Round(time.Millisecond))
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// silentServer listens on a port pair (HTTP and gRPC, +1000) of 127.0.0.1
// and accepts connections without ever reading or writing.
type silentServer struct {
	addr  string
	close func()
}

func startSilentServer(t *testing.T) *silentServer {
	t.Helper()
	hl, gl := listenPortPair(t)
	var (
		wg    gosync.WaitGroup
		mu    gosync.Mutex
		conns []net.Conn
	)
	accept := func(l net.Listener) {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}
	wg.Add(2)
	go accept(hl)
	go accept(gl)
	var once gosync.Once
	s := &silentServer{addr: hl.Addr().String(), close: func() {
		once.Do(func() {
			hl.Close()
			gl.Close()
			wg.Wait()
			mu.Lock()
			for _, c := range conns {
				c.Close()
			}
			mu.Unlock()
		})
	}}
	t.Cleanup(s.close)
	return s
}

// listenPortPair listens on a free port P of 127.0.0.1 and on P+1000, the
// HTTP and gRPC ports of one Nacos server address.
func listenPortPair(t *testing.T) (httpL, grpcL net.Listener) {
	t.Helper()
	for range 100 {
		port := 21000 + rand.IntN(30000)
		h, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		g, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+1000))
		if err != nil {
			h.Close()
			continue
		}
		return h, g
	}
	t.Fatal("no free port pair")
	return nil, nil
}
