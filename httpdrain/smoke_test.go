package httpdrain_test

import (
	"io"
	"net/http"
	"testing"
	"time"
)

func TestSmokeHTTP1(t *testing.T) {
	in := start(t, timings(100*time.Millisecond, time.Second), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}), nil)
	c := &http.Client{Transport: &http.Transport{}}
	defer c.CloseIdleConnections()
	resp, err := c.Get(in.url("/"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok" || resp.Close {
		t.Fatalf("body %q close %v", b, resp.Close)
	}
	if err := in.lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	// During the window: served, with Connection: close.
	resp, err = c.Get(in.url("/"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if !resp.Close {
		t.Fatal("response during the window lacks Connection: close")
	}
	if err := in.wait(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	tl, _ := in.lc.Timeline()
	if tl.LateArrivals != 1 {
		t.Fatalf("late arrivals %d, want 1", tl.LateArrivals)
	}
}
