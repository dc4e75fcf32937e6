package app

import (
	"fmt"
	"net/http"
	"time"
)

// MaxWork is the longest duration GET /work accepts.
const MaxWork = 10 * time.Minute

// work answers GET /work?d=<duration> with 200 after d (default 1s; Go
// duration syntax, 0 to MaxWork). It gives up only when the request's own
// context ends (the client went away or the server cut the connection);
// a drain does not shorten it. A bad d gets 400 naming the parameter.
func work(w http.ResponseWriter, r *http.Request) {
	d := time.Second
	if s := r.URL.Query().Get("d"); s != "" {
		v, err := time.ParseDuration(s)
		if err != nil || v < 0 || v > MaxWork {
			http.Error(w, fmt.Sprintf("d: %q is not a duration between 0s and %s (e.g. d=2s)", s, MaxWork), http.StatusBadRequest)
			return
		}
		d = v
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = fmt.Fprintf(w, "worked %s\n", d)
}
