package serve

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/config"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunRejectsUnknownStrategy(t *testing.T) {
	if code := Run(Options{Strategy: "sleep", Config: config.Default()}); code != 1 {
		t.Fatalf("exit code %d, want 1", code)
	}
}

// TestListenFailsBeforeServing: a busy service port fails at start, naming
// the flag, and leaves no listener open.
func TestListenFailsBeforeServing(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	cfg := config.Default()
	cfg.Admin.Addr = "127.0.0.1:0"
	_, _, err = listen(Options{HTTPAddr: busy.Addr().String(), Config: cfg})
	if err == nil || !strings.Contains(err.Error(), "--http-addr") {
		t.Fatalf("err = %v, want one naming --http-addr", err)
	}

	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	httpAddr := free.Addr().String()
	_ = free.Close()
	cfg.Admin.Addr = busy.Addr().String()
	_, _, err = listen(Options{HTTPAddr: httpAddr, Config: cfg})
	if err == nil || !strings.Contains(err.Error(), "--admin-addr") {
		t.Fatalf("err = %v, want one naming --admin-addr", err)
	}
	// The service listener opened first was closed again.
	ln, err := net.Listen("tcp", httpAddr)
	if err != nil {
		t.Fatalf("the service port stayed bound after the admin listener failed: %v", err)
	}
	_ = ln.Close()
}

// TestHandlerAcceptsPOST: the drill's POST / (--method POST) is read to the
// end and answered like GET /, not 405.
func TestHandlerAcceptsPOST(t *testing.T) {
	srv := httptest.NewServer(handler(time.Time{}))
	defer srv.Close()
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		req, err := http.NewRequest(method, srv.URL+"/", strings.NewReader("drill request body"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "hello") {
			t.Errorf("%s /: %s %q", method, resp.Status, body)
		}
	}
	srv.Client().CloseIdleConnections()
}
