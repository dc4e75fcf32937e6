package consumer_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/drainkit/drainkit/consumer"
)

// A client of service "orders", two of whose instances are listed: one
// refuses connections (it was killed), so its requests go to the other,
// and after three refusals it is ejected.
func Example() {
	live := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "order %s", r.URL.Path[len("/orders/"):])
	}))
	defer live.Close()
	killed := httptest.NewServer(http.NotFoundHandler())
	killed.Close()

	src, err := consumer.Static("orders", live.Listener.Addr().String(), killed.Listener.Addr().String())
	if err != nil {
		panic(err)
	}
	w, err := consumer.NewWatcher(consumer.WatcherOptions{Service: "orders", Source: src})
	if err != nil {
		panic(err)
	}
	defer w.Close()
	tr, err := consumer.NewTransport(w, "", consumer.Options{})
	if err != nil {
		panic(err)
	}
	defer tr.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.Wait(ctx); err != nil {
		panic(err)
	}

	client := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	for _, id := range []string{"1", "2", "3", "4"} {
		resp, err := client.Post("http://orders/orders/"+id, "text/plain", nil)
		if err != nil {
			fmt.Println(err)
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.StatusCode, string(body))
	}
	s := tr.Status()
	fmt.Printf("requests=%d failures=%d ejected=%d panic=%t\n", s.Requests, s.Failures, s.Ejected, s.PanicMode)
	// Output:
	// 200 order 1
	// 200 order 2
	// 200 order 3
	// 200 order 4
	// requests=4 failures=0 ejected=1 panic=false
}
