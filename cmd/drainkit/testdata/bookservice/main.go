// Command bookservice is a service wired by the book, for the drill's tests:
// drainkit.Main, and etcd registration from the registry settings of the
// config package only (registry.service, registry.etcd.*; in the environment
// DRAINKIT_REGISTRY_SERVICE, DRAINKIT_REGISTRY_ETCD_ENDPOINTS, ...). It reads
// no ETCD_ENDPOINTS: a drill must pass what drainkit programs read.
//
// Its handler answers every request with $BOOKSERVICE_STATUS (default 200),
// except GET /ok (always 200) and, when $BOOKSERVICE_WANT is set, requests
// whose "METHOD target body" is not that text (500), so that a test can
// drill an unhealthy service and an endpoint of its choosing. With
// BOOKSERVICE_REGISTER=off it accepts the registry settings but registers
// nowhere (a replica that discovery never lists).
package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry/etcd"
)

func main() {
	status, _ := strconv.Atoi(os.Getenv("BOOKSERVICE_STATUS"))
	want := os.Getenv("BOOKSERVICE_WANT")
	register := os.Getenv("BOOKSERVICE_REGISTER") != "off"
	mux := http.NewServeMux()
	mux.HandleFunc("GET /ok", func(w http.ResponseWriter, r *http.Request) { _, _ = fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case want != "" && r.Method+" "+r.URL.RequestURI()+" "+string(body) != want:
			http.Error(w, "not the request wanted", http.StatusInternalServerError)
		case status != 0:
			http.Error(w, http.StatusText(status), status)
		default:
			_, _ = fmt.Fprintln(w, "book")
		}
	})
	os.Exit(drainkit.Main(
		drainkit.WithHTTP("http", "127.0.0.1:8080", mux),
		drainkit.WithRegistrar("etcd", drainkit.Registration{
			Keys: etcd.Keys(),
			Check: func(cfg *config.Config) error {
				if cfg.Registry.Etcd.Endpoints == "" {
					return nil // registers nowhere
				}
				_, err := etcd.OptionsFrom(cfg.Registry, "bookservice", 1)
				return err
			},
			Build: func(cfg *config.Config, b drainkit.Bound) (lifecycle.Registrar, error) {
				if cfg.Registry.Etcd.Endpoints == "" || !register {
					return nil, nil
				}
				o, err := etcd.OptionsFrom(cfg.Registry, "bookservice", 1)
				if err != nil {
					return nil, err
				}
				o.SetEndpoints(b.Endpoints)
				return etcd.New(o)
			},
		}),
	))
}
