package serve

import (
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
)

// ServedByHeader is the response header in which the example service names
// the address (IP) its connection was accepted on. Behind a Service's
// ClusterIP a client only knows the Service's address; this tells it which
// pod answered (kube-proxy's DNAT rewrote the destination), which the
// Kubernetes drill needs for the last request each old pod served.
const ServedByHeader = "X-Drainkit-Served-By"

// withServedBy sets ServedByHeader on every response of h.
func withServedBy(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
			if host, _, err := net.SplitHostPort(a.String()); err == nil {
				w.Header().Set(ServedByHeader, host)
			}
		}
		h.ServeHTTP(w, r)
	})
}

// SignalLogged is the message logged when the process receives SIGTERM (the
// slog record's time is the instant): with a preStop hook the drain starts
// before the signal and the lifecycle logs nothing when it joins, so the
// Kubernetes drill reads the kubelet's SIGTERM from this line.
const SignalLogged = "serve: SIGTERM received"

// logSIGTERM logs SignalLogged when SIGTERM arrives until stop is called. It
// only observes: signal.Notify delivers to every registered channel, so the
// strategy's own handling is unchanged. Call it only where SIGTERM is
// already caught (the exit strategy relies on its default action).
func logSIGTERM(logger *slog.Logger) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM)
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-sigs:
			logger.Info(SignalLogged)
		case <-done:
			// A signal that came with stop is still logged.
			select {
			case <-sigs:
				logger.Info(SignalLogged)
			default:
			}
		}
	}()
	return func() { signal.Stop(sigs); close(done); <-exited }
}
