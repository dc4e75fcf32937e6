// Package anchor holds what the three anchor services share: the command
// line `drainkit drill --exec` passes (--http-addr, --admin-addr), the
// shutdown deadline taken from the drill's DRAINKIT_DRAIN_TIMEOUT, and the
// example service's handlers (examples/httpservice/app, imported from the
// main module so that every service under drill answers the same requests).
//
// The anchors are "what users would use instead of drainkit": each wires its
// framework's graceful shutdown the way the framework documents it, and
// nothing more. None of them has a propagation window; the drill's other
// DRAINKIT_* keys (propagation.*, stop.timeout, grace_period) have no
// equivalent in them and are ignored.
package anchor

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/drainkit/drainkit/examples/httpservice/app"
)

// Flags are the addresses the drill gives every replica.
type Flags struct {
	HTTPAddr  string // service listener, host:port
	AdminAddr string // admin listener (readiness), host:port
}

// ParseFlags parses --http-addr and --admin-addr from os.Args, exiting 2
// with a message naming the flag on bad input.
func ParseFlags(name string) Flags {
	var f Flags
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	fs.StringVar(&f.HTTPAddr, "http-addr", "127.0.0.1:8080", "service listener, host:port")
	fs.StringVar(&f.AdminAddr, "admin-addr", "127.0.0.1:8081", "admin listener serving GET /readyz, host:port")
	_ = fs.Parse(os.Args[1:])
	for _, a := range []struct{ flag, v string }{{"--http-addr", f.HTTPAddr}, {"--admin-addr", f.AdminAddr}} {
		if _, _, err := SplitHostPort(a.v); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %s: %v (want host:port)\n", name, a.flag, err)
			os.Exit(2)
		}
	}
	return f
}

// SplitHostPort splits host:port and parses the port.
func SplitHostPort(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("port %q is not 0..65535", p)
	}
	return host, port, nil
}

// DrainTimeout is the deadline for in-flight requests after the shutdown
// began: DRAINKIT_DRAIN_TIMEOUT (Go duration syntax) when set and valid,
// else def (the framework's own default).
func DrainTimeout(def time.Duration) time.Duration {
	s := os.Getenv("DRAINKIT_DRAIN_TIMEOUT")
	if s == "" {
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		fmt.Fprintf(os.Stderr, "DRAINKIT_DRAIN_TIMEOUT: %q is not a positive duration; using %s\n", s, def)
		return def
	}
	return d
}

// Handler returns the example service's routes (GET /, GET /work?d=).
func Handler() http.Handler { return app.Handler() }

// Ready answers a readiness probe with 200 "ok": the probe users of these
// frameworks point Kubernetes at is "the process serves HTTP", so it answers
// 200 for as long as its listener accepts connections.
func Ready(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}
