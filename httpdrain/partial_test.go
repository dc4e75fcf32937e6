package httpdrain_test

import (
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
)

// TestPartialRequestCutIsCounted: a request whose header is still arriving
// at the drain deadline is cut, counted, and makes the exit code 1.
func TestPartialRequestCutIsCounted(t *testing.T) {
	in := start(t, timings(200*time.Millisecond, 500*time.Millisecond),
		http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}), nil)
	c, err := net.Dial("tcp", in.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("POST /upload HTTP/1.1\r\nHost: x\r\n")); err != nil { // header not finished
		t.Fatal(err)
	}
	waitFor(t, 5*time.Second, "the partial request being read", func() bool { return httpdrain.ReadingConns(in.hs) == 1 })
	in.drain()
	err = in.wait(10 * time.Second)
	tl, _ := in.lc.Timeline()
	if exitCode(err) != 1 || tl.ForceClosed != 1 {
		t.Fatalf("exit code %d, force_closed %d: want 1 and 1 (steps %+v)", exitCode(err), tl.ForceClosed, tl.Steps)
	}
}
