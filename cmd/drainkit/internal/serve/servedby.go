package serve

import (
	"net"
	"net/http"
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
