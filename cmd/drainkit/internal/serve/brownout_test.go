package serve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestCapacitySheds: with a capacity of 2, a third request while two run
// is shed at once with 503 "over capacity"; once they finish, requests
// are served again.
func TestCapacitySheds(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	h := withCapacity(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			entered <- struct{}{}
			<-release
		}
	}), 2)
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer srv.Client().CloseIdleConnections()
	status := func(path string) int {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Error(err)
			return 0
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	done := make(chan int, 2)
	for range 2 {
		go func() { done <- status("/hold") }()
		<-entered
	}
	if got := status("/"); got != http.StatusServiceUnavailable {
		t.Errorf("a third request while two run: %d, want 503", got)
	}
	close(release)
	for range 2 {
		if got := <-done; got != http.StatusOK {
			t.Errorf("held request: %d", got)
		}
	}
	if got := status("/"); got != http.StatusOK {
		t.Errorf("after the held requests: %d, want 200", got)
	}
}

// TestBrownoutWaits: while the brownout file exists a request waits (here
// until its client gives up); without it the request is answered at once.
func TestBrownoutWaits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "port")
	srv := httptest.NewServer(withBrownout(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), path))
	defer srv.Close()
	defer srv.Client().CloseIdleConnections()
	get := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := srv.Client().Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		return err
	}
	if err := get(); err != nil {
		t.Fatalf("without the file: %v", err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := get(); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("with the file: %v, want the client's deadline", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := get(); err != nil {
		t.Errorf("after the file is gone: %v", err)
	}
}

// TestServiceServerSpeaksH2C: the example's service server answers HTTP/2
// with prior knowledge (the long-lived scenario's HTTP/2 streams) and
// HTTP/1.1.
func TestServiceServerSpeaksH2C(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := serviceServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	defer func() {
		_ = srv.Close()
		<-done
	}()
	for _, h2 := range []bool{false, true} {
		tr := &http.Transport{}
		if h2 {
			p := new(http.Protocols)
			p.SetUnencryptedHTTP2(true)
			tr.Protocols = p
		}
		resp, err := (&http.Client{Transport: tr}).Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		tr.CloseIdleConnections()
		if want := map[bool]int{false: 1, true: 2}[h2]; resp.ProtoMajor != want {
			t.Errorf("h2c %v: answered over %s", h2, resp.Proto)
		}
	}
}
