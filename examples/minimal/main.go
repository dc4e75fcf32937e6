package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/drainkit/drainkit"
)

func main() {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		if _, err := fmt.Fprintln(w, "hello"); err != nil {
			log.Printf("writing the response: %v", err) // the client went away
		}
	})
	os.Exit(drainkit.Main(
		drainkit.WithHTTP("http", ":8080", mux), // --http-addr overrides
		drainkit.OnWarmup("cache", func(ctx context.Context) error {
			return nil // readiness fails until warm-up hooks return nil
		}),
		drainkit.OnStop("cache", func(ctx context.Context) error {
			return nil // stop hooks run last, after in-flight requests ended
		}),
	))
}
