// Command hello is the test image of internal/kubetest: "hello serve ADDR"
// answers every request with "hello from <its own IP>"; "hello get URL"
// GETs URL until it answers 200 (for up to a minute), prints the body and
// exits 0, else exits 1.
package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: hello serve ADDR | hello get URL")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		serve(os.Args[2])
	case "get":
		os.Exit(get(os.Args[2]))
	}
	os.Exit(2)
}

func serve(addr string) {
	srv := &http.Server{Addr: addr, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		local := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		host, _, _ := net.SplitHostPort(local.String())
		fmt.Fprintf(w, "hello from %s\n", host)
	})}
	go func() {
		stop := make(chan os.Signal, 1)
		signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
		<-stop
		srv.Close()
	}()
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func get(url string) int {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := client.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				fmt.Print(string(body))
				return 0
			}
			err = fmt.Errorf("%s", resp.Status)
		}
		fmt.Fprintln(os.Stderr, err)
		if time.Now().After(deadline) {
			return 1
		}
		time.Sleep(time.Second)
	}
}
