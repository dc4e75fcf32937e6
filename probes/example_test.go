package probes_test

import (
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/probes"
)

// get sends one request through h and prints the answer.
func get(h *probes.Handler, method, target string) {
	req := httptest.NewRequest(method, target, nil)
	req.RemoteAddr = "127.0.0.1:40000" // the operator's loopback peer
	req.Host = "localhost:8081"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	fmt.Printf("%s %s: %d\n%s", method, target, rec.Code, rec.Body)
}

// The probes follow the lifecycle's state: while warm-up runs, startup and
// readiness fail and liveness passes; after POST /drain, readiness fails
// with the state as the reason.
func ExampleNew() {
	quiet := slog.New(slog.DiscardHandler)
	lc, err := lifecycle.New(lifecycle.Options{Logger: quiet, Signals: []os.Signal{}})
	if err != nil {
		fmt.Println(err)
		return
	}
	h, err := probes.New(lc, probes.Options{Logger: quiet})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer h.Close() // after the admin server has shut down

	get(h, "GET", "/startupz")
	get(h, "GET", "/livez")
	get(h, "POST", "/drain?reason=rollout")
	get(h, "GET", "/readyz?verbose")
	fmt.Println(lc.Status().Reason)
	// Output:
	// GET /startupz: 503
	// [-]state failed: STARTING
	// startupz check failed
	// GET /livez: 200
	// livez check passed
	// POST /drain?reason=rollout: 202
	// drain started
	// GET /readyz?verbose: 503
	// [-]state failed: DRAINING
	// readyz check failed
	// POST /drain from 127.0.0.1: rollout
}
