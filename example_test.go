package drainkit_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/drainkit/drainkit"
)

// A service started through the entry point: it answers a request once
// ready, then drains when its context is cancelled (as on SIGTERM) and
// returns exit code 0. Real programs call drainkit.Main from main.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello") })
	addrs := make(chan map[string]net.Addr, 1)
	go func() { // a client: waits until ready, sends one request, then stops the service
		a := <-addrs
		waitReady("http://" + a["admin"].String() + "/readyz")
		fmt.Print(get("http://" + a["http"].String() + "/"))
		cancel()
	}()
	code := drainkit.Run(ctx,
		[]string{"--http-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0", "--propagation-min", "0s", "--propagation-quiet", "0s", "--propagation-max", "0s"},
		drainkit.WithHTTP("http", ":8080", mux),
		drainkit.OnStarted(func(a map[string]net.Addr) { addrs <- a }),
		drainkit.OnStop("report", func(context.Context) error { fmt.Println("stop hook ran"); return nil }),
		drainkit.WithLogger(slog.New(slog.DiscardHandler)),
	)
	fmt.Println("exit code", code)
	// Output:
	// hello
	// stop hook ran
	// exit code 0
}

func waitReady(url string) {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
}

func get(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	http.DefaultClient.CloseIdleConnections()
	return string(b)
}
