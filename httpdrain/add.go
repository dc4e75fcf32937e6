package httpdrain

import (
	"net"
	"net/http"

	"github.com/drainkit/drainkit/lifecycle"
)

// Add is New followed by lc.AddServer(name, ...), the one-pass form:
//
//	httpdrain.Add(lc, "http", srv, ln)
//
// name identifies the server in logs and GET /state. It returns the Server
// (for Draining-aware code that wants it); everything New says about srv and
// ln applies. The drainkit package's entry point calls it for each listener
// given with drainkit.WithHTTP or drainkit.WithHTTPServer.
func Add(lc *lifecycle.Lifecycle, name string, srv *http.Server, ln net.Listener, opts ...Option) *Server {
	s := New(srv, ln, opts...)
	lc.AddServer(name, s)
	return s
}
