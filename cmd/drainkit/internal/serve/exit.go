package serve

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"
)

// runExit serves with no drain at all: it installs no signal handler, so
// SIGTERM's default action kills the process mid-request. It returns only if
// a listener fails.
func runExit(o Options, logger *slog.Logger) (int, error) {
	httpLn, adminLn, err := listen(o)
	if err != nil {
		return 1, err
	}
	grpcLn, err := listenGRPC(o)
	if err != nil {
		return 1, err
	}
	if _, err := register(o, httpLn, grpcLn, logger); err != nil {
		return 1, err
	}
	srv := serviceServer(serviceHandler(o, httpLn))
	admin := &http.Server{Handler: alwaysReady(), ReadHeaderTimeout: 10 * time.Second}
	errs := make(chan error, 3)
	go func() { errs <- srv.Serve(httpLn) }()
	go func() { errs <- admin.Serve(adminLn) }()
	if grpcLn != nil {
		var never lateCounter // never started: nothing is late without a shutdown
		gs := plainGRPC(&never)
		go func() { errs <- gs.Serve(grpcLn) }()
	}
	return 1, fmt.Errorf("listener failed: %w", <-errs)
}

func splitAddr(a net.Addr) (string, int) {
	host, p, _ := net.SplitHostPort(a.String())
	port, _ := strconv.Atoi(p)
	return host, port
}
