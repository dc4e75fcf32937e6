package app

import (
	"fmt"
	"net/http"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
)

// EventInterval is the period of GET /events.
const EventInterval = 100 * time.Millisecond

// events answers GET /events with a server-sent-events stream
// (text/event-stream): one event every EventInterval ("id: n", "data: n").
// When the drain begins (httpdrain.Draining), it sends a final
// "event: drain" with "retry: 1000" and ends the response, so the client
// reconnects a second later, through the load balancer, to an instance that
// is not going away (a stream opened here during the propagation window gets
// the same answer at once; the retry delay keeps such clients from spinning
// against a balancer that has not yet noticed). It also ends when
// the client leaves. Served by a plain http.Server (no httpdrain), it streams
// until the client leaves.
func events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	if err := rc.Flush(); err != nil {
		return
	}
	drain := httpdrain.Draining(r.Context()) // nil without httpdrain: never fires
	tick := time.NewTicker(EventInterval)
	defer tick.Stop()
	for n := 1; ; n++ {
		select {
		case <-drain:
			_, _ = fmt.Fprint(w, "retry: 1000\nevent: drain\ndata: this instance is draining; reconnect\n\n")
			_ = rc.Flush()
			return
		case <-r.Context().Done():
			return
		case <-tick.C:
			if _, err := fmt.Fprintf(w, "id: %d\ndata: %d\n\n", n, n); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
	}
}
