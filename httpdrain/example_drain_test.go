package httpdrain_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/drainkit/drainkit/httpdrain"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
)

// A drain as a client sees it: before t0 a keep-alive response; during the
// propagation window the request is still served, with Connection: close;
// the drain ends without cutting anything, and the timeline counts the
// window's request as a late arrival.
func Example_drain() {
	lc, _ := lifecycle.New(lifecycle.Options{Signals: []os.Signal{}, Logger: slog.New(slog.DiscardHandler), Timings: budget.Timings{
		WarmupTimeout: time.Second, PropagationMin: time.Second, PropagationMax: time.Second,
		DrainTimeout: time.Second, StopTimeout: time.Second, GracePeriod: 5 * time.Second,
	}})
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	srv := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello")
	})}
	lc.AddServer("http", httpdrain.New(srv, ln))
	sub, unsubscribe := lc.Subscribe()
	runErr := make(chan error, 1)
	go func() { runErr <- lc.Run(context.Background()) }()
	for lc.State() != lifecycle.Ready {
		<-sub
	}
	unsubscribe()

	client := &http.Client{Transport: &http.Transport{}}
	get := func(when string) {
		resp, err := client.Get("http://" + ln.Addr().String() + "/")
		if err != nil {
			fmt.Println(when, err)
			return
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%s: %d %s, Connection: close %v\n", when, resp.StatusCode, body, resp.Close)
	}
	get("before the drain")
	_ = lc.Drain("rolling restart")
	for { // until the servers are in lame duck (the not_ready step)
		if tl, _ := lc.Timeline(); len(tl.Steps) > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	get("in the window")
	fmt.Println("Run:", <-runErr)
	tl, _ := lc.Timeline()
	fmt.Println("late arrivals:", tl.LateArrivals, "force-closed:", tl.ForceClosed)
	// Output:
	// before the drain: 200 hello, Connection: close false
	// in the window: 200 hello, Connection: close true
	// Run: <nil>
	// late arrivals: 1 force-closed: 0
}
