package httpdrain

import (
	"context"
	"crypto/tls"
	"errors"
	"maps"
	"net"
	"net/http"
)

// HTTP/2 (over TLS, and unencrypted HTTP/2 enabled with http.Server.Protocols)
// is served by net/http's bundled HTTP/2 server. Its only way to send GOAWAY
// to every connection is the hook it registers with RegisterOnShutdown on the
// http.Server it was configured on, run by that server's Shutdown. Shutdown on
// the user's server would close its listeners and make net/http drop requests
// read after it (server.go: "if c.server.shuttingDown() { return }"), so
// httpdrain configures the HTTP/2 server on a shadow http.Server instead,
// installs the resulting TLSNextProto handlers on the user's server, and calls
// the shadow's Shutdown to send GOAWAY: the shadow owns no listener and no
// connection, so its Shutdown does nothing else and returns at once.

// nextProtoUnencryptedHTTP2 is net/http's TLSNextProto key for unencrypted
// HTTP/2 connections (http.Protocols.SetUnencryptedHTTP2).
const nextProtoUnencryptedHTTP2 = "unencrypted_http2"

// setupHTTP2 configures HTTP/2 on srv through a shadow server when srv has
// no TLSNextProto of its own, and wraps the HTTP/2 handlers to mark their
// connections.
func (s *Server) setupHTTP2() {
	srv := s.srv
	if srv.TLSNextProto == nil {
		shadow := &http.Server{
			IdleTimeout: srv.IdleTimeout, // copied into the HTTP/2 server's config
			ReadTimeout: srv.ReadTimeout,
			ErrorLog:    srv.ErrorLog,
		}
		p := new(http.Protocols)
		p.SetHTTP1(true)
		p.SetHTTP2(true)
		p.SetUnencryptedHTTP2(true)
		shadow.Protocols = p
		// Serve configures HTTP/2 on shadow (as it would on srv), then returns
		// the listener's Accept error.
		_ = shadow.Serve(failListener{})
		if shadow.TLSNextProto["h2"] != nil {
			srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){
				"h2": shadow.TLSNextProto["h2"],
			}
			if fn := shadow.TLSNextProto[nextProtoUnencryptedHTTP2]; fn != nil {
				srv.TLSNextProto[nextProtoUnencryptedHTTP2] = fn
			}
			s.shadow = shadow
		}
		// Else HTTP/2 is disabled (GODEBUG=http2server=0): leave srv alone.
	}
	if srv.TLSNextProto == nil {
		return
	}
	m := maps.Clone(srv.TLSNextProto)
	for _, key := range []string{"h2", nextProtoUnencryptedHTTP2} {
		fn := m[key]
		if fn == nil {
			continue
		}
		m[key] = func(hs *http.Server, tc *tls.Conn, h http.Handler) {
			if c := connOf(tc); c != nil {
				c.h2.Store(true)
			}
			fn(hs, tc, h)
		}
	}
	srv.TLSNextProto = m
}

// goAway starts graceful shutdown (GOAWAY, then close when the streams are
// done) on every HTTP/2 connection open now. It returns at once.
func (s *Server) goAway() {
	if s.shadow != nil {
		_ = s.shadow.Shutdown(context.Background())
	}
}

// failListener makes the shadow server's Serve return right after setup.
type failListener struct{}

var errShadow = errors.New("httpdrain: shadow server does not accept")

func (failListener) Accept() (net.Conn, error) { return nil, errShadow }
func (failListener) Close() error              { return nil }
func (failListener) Addr() net.Addr            { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
