package drainkit

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"
)

// AdminLimits bound what clients of the admin listener may hold, so that
// slow or idle clients never starve the probes (DESIGN.md section 2). A zero
// field means no limit (no timeout, as in net/http, or no connection cap),
// not the default: start from DefaultAdminLimits().
type AdminLimits struct {
	// ReadHeaderTimeout closes a connection whose request headers did not
	// arrive within it (slowloris; default 2s).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request (default 5s).
	ReadTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle this long (default
	// 10s).
	IdleTimeout time.Duration
	// MaxConns caps open admin connections (default 128). When a new
	// connection would exceed it, the oldest connection that is not running
	// a request (new, or idle between requests) is closed, so a flood of idle
	// or byte-at-a-time clients cannot lock a probe out, and the process
	// keeps file descriptors for its service listeners.
	MaxConns int
}

// DefaultAdminLimits returns the admin listener's defaults: read header
// timeout 2s, read timeout 5s, idle timeout 10s, 128 connections. There is
// no write timeout: POST /drain?wait=propagation answers after the
// propagation window.
func DefaultAdminLimits() AdminLimits {
	return AdminLimits{ReadHeaderTimeout: 2 * time.Second, ReadTimeout: 5 * time.Second, IdleTimeout: 10 * time.Second, MaxConns: 128}
}

type adminHandler struct {
	pattern string
	h       http.Handler
}

// adminServer serves the admin handler on its listener until shutdown.
type adminServer struct {
	srv  *http.Server
	ln   net.Listener
	cap  *connCap
	done chan struct{}
}

func newAdminServer(ln net.Listener, h http.Handler, l AdminLimits, logger *slog.Logger) *adminServer {
	cc := &connCap{max: l.MaxConns, conns: map[net.Conn]*capConn{}}
	srv := &http.Server{Handler: cc.track(h), ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		IdleTimeout: l.IdleTimeout, ConnState: cc.connState, ConnContext: withConn,
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelDebug)}
	return &adminServer{srv: srv, ln: ln, cap: cc, done: make(chan struct{})}
}

func (a *adminServer) serve(logger *slog.Logger) {
	defer close(a.done)
	if err := a.srv.Serve(a.ln); !errors.Is(err, http.ErrServerClosed) {
		logger.Error("admin listener failed", "error", err)
	}
}

// shutdown closes the admin listener after the drain: it served throughout.
func (a *adminServer) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := a.srv.Shutdown(ctx); err != nil {
		_ = a.srv.Close()
	}
	<-a.done
}

// connCap enforces AdminLimits.MaxConns by evicting the oldest connection
// not running a request.
type connCap struct {
	max   int
	mu    sync.Mutex
	seq   uint64
	conns map[net.Conn]*capConn
}

type capConn struct {
	seq  uint64
	busy bool
}

func (c *connCap) connState(nc net.Conn, st http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch st {
	case http.StateNew:
		c.seq++
		c.conns[nc] = &capConn{seq: c.seq}
		if c.max > 0 && len(c.conns) > c.max {
			c.evictLocked(nc)
		}
	case http.StateHijacked, http.StateClosed:
		delete(c.conns, nc)
	}
}

type connKey struct{}

func withConn(ctx context.Context, nc net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, nc)
}

// track marks a connection busy while a handler runs on it: only then is it
// spared by eviction (a client still sending its headers is not).
func (c *connCap) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		nc, _ := r.Context().Value(connKey{}).(net.Conn)
		c.setBusy(nc, true)
		defer c.setBusy(nc, false)
		h.ServeHTTP(w, r)
	})
}

func (c *connCap) setBusy(nc net.Conn, busy bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if cc := c.conns[nc]; cc != nil {
		cc.busy = busy
	}
}

// evictLocked closes the oldest connection other than keep that is not
// running a request; if all are busy, keep itself.
func (c *connCap) evictLocked(keep net.Conn) {
	var victim net.Conn
	var oldest uint64
	for nc, cc := range c.conns {
		if nc != keep && !cc.busy && (victim == nil || cc.seq < oldest) {
			victim, oldest = nc, cc.seq
		}
	}
	if victim == nil {
		victim = keep
	}
	delete(c.conns, victim)
	_ = victim.Close()
}
