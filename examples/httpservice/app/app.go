// Package app is the example service's request handling, separate from its
// main so that other programs (the drill) can serve the same endpoints:
//
//	GET /          a short plain-text answer
//	GET /work?d=2s answers 200 after d (a simulated slow request)
//
// Handlers know nothing about draining: the server wrapper (httpdrain) does.
package app

import "net/http"

// Handler returns the service's routes. Each call returns a new, independent
// handler; it is safe for concurrent use.
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", hello)
	mux.HandleFunc("GET /work", work)
	mux.HandleFunc("GET /events", events)
	return mux
}

// hello answers GET / with one line.
func hello(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("hello from the drainkit example\n"))
}
