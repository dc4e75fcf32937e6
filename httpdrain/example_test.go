package httpdrain_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
)

// A service's main: the lifecycle runs the server and drains it on SIGTERM.
func ExampleNew() {
	run := func() int {
		lc, err := lifecycle.New(lifecycle.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		ln, err := net.Listen("tcp", ":8080")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		mux := http.NewServeMux()
		mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello") })
		srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		lc.AddServer("http", httpdrain.New(srv, ln))
		return lifecycle.ExitCode(lc.Run(context.Background()))
	}
	_ = run // os.Exit(run()) in main
}

// A server-sent-events handler ends its stream with a last event when the
// drain begins, so the client reconnects to an instance that stays.
func ExampleDraining() {
	events := func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-httpdrain.Draining(r.Context()):
				fmt.Fprint(w, "event: drain\ndata: reconnect\n\n")
				_ = rc.Flush()
				return
			case <-r.Context().Done():
				return
			case t := <-tick.C:
				fmt.Fprintf(w, "data: %s\n\n", t.Format(time.RFC3339))
				if rc.Flush() != nil {
					return
				}
			}
		}
	}
	http.HandleFunc("GET /events", events)
}
