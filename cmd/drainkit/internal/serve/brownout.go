package serve

import (
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// BrownoutDelay is how long the example service makes a request wait while
// its brownout file exists (Options.BrownoutDir), unless the client gives up
// first: longer than any per-try timeout, so that the instance looks hung
// to its consumers while its readiness stays 200.
const BrownoutDelay = 5 * time.Second

// withCapacity lets at most k requests run h at once (a fixed pool of
// workers); a request beyond that is shed at once with 503 "over capacity",
// as an overloaded service does. k <= 0 means no limit.
func withCapacity(h http.Handler, k int) http.Handler {
	if k <= 0 {
		return h
	}
	slots := make(chan struct{}, k)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
		default:
			http.Error(w, "over capacity", http.StatusServiceUnavailable)
			return
		}
		defer func() { <-slots }()
		h.ServeHTTP(w, r)
	})
}

// withBrownout makes every request wait BrownoutDelay before h answers it
// while the file at path exists (a dependency that stalls), or until the
// client gives up: the request holds its worker (withCapacity) meanwhile.
// path "" means never.
func withBrownout(h http.Handler, path string) http.Handler {
	if path == "" {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := os.Stat(path); err == nil {
			t := time.NewTimer(BrownoutDelay)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// serviceHandler is the example's handler (handler) for the instance
// listening on ln, behind the brownout switch and the capacity limit
// Options ask for.
func serviceHandler(o Options, ln net.Listener) http.Handler {
	h := handler(o.warmUntil())
	if o.BrownoutDir != "" {
		h = withBrownout(h, filepath.Join(o.BrownoutDir, portOf(ln.Addr())))
	}
	return withServedBy(withCapacity(h, o.Capacity))
}

// serviceServer is the example's service server: HTTP/1.1 and unencrypted
// HTTP/2 (prior knowledge, h2c), so that the drill's long-lived scenario
// can hold HTTP/2 streams across a drain and see its GOAWAY.
func serviceServer(h http.Handler) *http.Server {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, Protocols: p}
}
