package httpdrain

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
)

// Server runs one *http.Server on one listener as a lifecycle.Server. Create
// it with New and add it with Lifecycle.AddServer; the lifecycle calls its
// methods. All methods are safe for concurrent use.
type Server struct {
	lc     *lifecycle.Lifecycle
	srv    *http.Server
	ln     net.Listener // the caller's listener
	wl     *listener    // what net/http accepts from
	useTLS bool
	grace  time.Duration
	shadow *http.Server // owns the HTTP/2 server's GOAWAY hook; nil without HTTP/2

	userConnState   func(net.Conn, http.ConnState)
	userConnContext func(context.Context, net.Conn) context.Context

	// Request path. The counters written per request sit on their own cache
	// lines, away from the flags every request reads.
	lameDuck          atomic.Bool
	closed            atomic.Bool  // listeners closed: completions wake AwaitIdle
	hijackedInHandler atomic.Int64 // handlers that hijacked and still run
	_                 [cacheLine]byte
	handlers          requestCounter // running handlers, hijacked or not
	busy              atomic.Int64   // connections in a busy phase
	_                 [cacheLine]byte
	hijacked          atomic.Int64

	drainCh  chan struct{} // closed by LameDuck
	wakeCh   chan struct{} // capacity 1: "something finished, re-check"
	finished chan struct{} // closed by finish
	allGone  chan struct{} // closed when finished and no connection is left

	lameOnce   sync.Once
	finishOnce sync.Once
	serving    atomic.Bool

	mu    sync.Mutex
	conns map[*trackedConn]struct{}

	finishing bool // finish ran: allGone closes when conns is empty
	gone      bool // allGone is closed
}

// Option configures New.
type Option func(*Server)

// DefaultNewConnGrace is the default for WithNewConnGrace.
const DefaultNewConnGrace = time.Second

// WithNewConnGrace sets how long, after the listeners close, a connection
// that was accepted but has not yet sent a request is waited for before it is
// closed (default DefaultNewConnGrace, 1s; 0 closes such connections at once).
// A client that has just connected is usually about to send; a browser's
// speculative preconnect may never send. Closing one counts as nothing cut.
// Negative values are treated as 0.
func WithNewConnGrace(d time.Duration) Option {
	return func(s *Server) {
		if d < 0 {
			d = 0
		}
		s.grace = d
	}
}

// New prepares srv to be served on ln and drained by lc, and returns the
// lifecycle.Server to pass to lc.AddServer; Add does both in one call:
//
//	httpdrain.Add(lc, "http", srv, ln)
//
// New modifies srv, so configure srv completely before calling it, and do not
// change it or call its Serve, Shutdown, Close or SetKeepAlivesEnabled
// afterwards: the lifecycle runs it. New wraps srv.Handler
// (http.DefaultServeMux when nil) with in-flight tracking, chains its own
// ConnState and ConnContext in front of any set by the caller (which keep
// working), and installs net/http's HTTP/2 server through TLSNextProto (see
// the package documentation; a TLSNextProto set by the caller is kept).
//
// ln must yield plain connections. To serve TLS (and HTTP/2 over TLS), set
// srv.TLSConfig with Certificates, GetCertificate or GetConfigForClient:
// Serve then calls srv.ServeTLS. A listener that yields *tls.Conn makes
// Serve fail, since httpdrain could not see its connections close.
//
// srv.RegisterOnShutdown functions are never called: httpdrain does not call
// srv.Shutdown. Use Draining instead.
func New(lc *lifecycle.Lifecycle, srv *http.Server, ln net.Listener, opts ...Option) *Server {
	s := &Server{
		lc:       lc,
		srv:      srv,
		ln:       ln,
		grace:    DefaultNewConnGrace,
		drainCh:  make(chan struct{}),
		wakeCh:   make(chan struct{}, 1),
		finished: make(chan struct{}),
		allGone:  make(chan struct{}),
		conns:    map[*trackedConn]struct{}{},
	}
	for _, o := range opts {
		o(s)
	}
	s.wl = &listener{Listener: ln, s: s}
	if c := srv.TLSConfig; c != nil {
		s.useTLS = len(c.Certificates) > 0 || c.GetCertificate != nil || c.GetConfigForClient != nil
	}

	next := srv.Handler
	if next == nil {
		next = http.DefaultServeMux
	}
	srv.Handler = &tracker{s: s, lc: lc, next: next}

	s.userConnState = srv.ConnState
	srv.ConnState = s.connState
	s.userConnContext = srv.ConnContext
	srv.ConnContext = func(ctx context.Context, nc net.Conn) context.Context {
		if s.userConnContext != nil {
			ctx = s.userConnContext(ctx, nc)
		}
		if c := connOf(nc); c != nil {
			ctx = context.WithValue(ctx, connKey{}, c)
		}
		return ctx
	}
	s.setupHTTP2()
	return s
}

// Serve serves srv on the listener (with TLS when srv.TLSConfig has a
// certificate). After CloseListeners it waits until the drain is over for this
// server (AwaitIdle succeeded or ForceClose ran) and its connections have
// closed, then returns nil. HTTP/2 connections, idle after GOAWAY, are closed
// once they have written nothing for 50-100ms (net/http itself would keep
// them up to 1s unless the client closes them, and Go's client does not);
// anything left after 2s is closed. Any other end is an error naming the
// listener's address; calling Serve twice is an error.
func (s *Server) Serve() error {
	if !s.serving.CompareAndSwap(false, true) {
		return errors.New("httpdrain: Serve called twice")
	}
	var err error
	if s.useTLS {
		err = s.srv.ServeTLS(s.wl, "", "")
	} else {
		err = s.srv.Serve(s.wl)
	}
	if !s.closed.Load() {
		_ = s.ln.Close()
		return fmt.Errorf("httpdrain: serving on %s: %w", s.ln.Addr(), err)
	}
	<-s.finished
	limit := time.NewTimer(lingerMax)
	defer limit.Stop()
	tick := time.NewTicker(lingerQuiet)
	defer tick.Stop()
	for {
		select {
		case <-s.allGone:
			return nil
		case <-tick.C:
			s.closeQuietH2()
		case <-limit.C:
			s.closeAll()
			return nil
		}
	}
}

const (
	// lingerMax bounds how long Serve waits, after the drain, for
	// connections to close.
	lingerMax = 2 * time.Second
	// lingerQuiet is how long an idle HTTP/2 connection must have written
	// nothing (so the last response's frames have been flushed) before Serve
	// closes it.
	lingerQuiet = 50 * time.Millisecond
)

// closeQuietH2 closes idle HTTP/2 connections (GOAWAY already sent, no
// stream open) whose writes have been quiet since the previous call.
func (s *Server) closeQuietH2() {
	var quiet []*trackedConn
	s.mu.Lock()
	for c := range s.conns {
		if c.phase.Load() != phH2Idle {
			continue
		}
		started := c.wstart.Load()
		if started == c.seenWrite && c.wdone.Load() == started {
			quiet = append(quiet, c)
		}
		c.seenWrite = started
	}
	s.mu.Unlock()
	for _, c := range quiet {
		c.closeIf(phH2Idle)
	}
}

// LameDuck starts the drain for this server: every response from now on
// carries Connection: close (HTTP/1.1: the connection closes after it;
// HTTP/2: net/http sends GOAWAY), every HTTP/2 connection gets GOAWAY now, and
// Draining channels close. It keeps serving, also on new connections, and
// cancels no request. Idle HTTP/1.1 keep-alive connections stay open: there
// is no way to tell an idle HTTP/1.1 client to go away, and closing the
// connection races with a request the client may be sending on it; a request
// that does come on it is served and answered with Connection: close. They
// are closed when the window ends (CloseListeners). Idempotent.
func (s *Server) LameDuck() {
	s.lameOnce.Do(func() {
		s.lameDuck.Store(true)
		close(s.drainCh)
		s.goAway()
	})
}

// CloseListeners closes the listener, sends GOAWAY to HTTP/2 connections
// opened since LameDuck, and closes idle HTTP/1.1 connections (those on which
// no byte of a next request has arrived). Connections accepted but still
// without a request are closed after the new-connection grace
// (WithNewConnGrace) unless a request begins. It returns the listener's Close
// error, if any.
func (s *Server) CloseListeners() error {
	s.LameDuck()
	s.closed.Store(true)
	err := s.ln.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	s.goAway()
	var idle []*trackedConn
	s.mu.Lock()
	for c := range s.conns {
		switch c.phase.Load() {
		case phIdle:
			idle = append(idle, c)
		case phNew:
			s.startGraceLocked(c)
		}
	}
	s.mu.Unlock()
	for _, c := range idle {
		c.closeIf(phIdle)
	}
	s.wake()
	return err
}

// startGraceLocked arms c's new-connection grace timer. s.mu is held.
func (s *Server) startGraceLocked(c *trackedConn) {
	if c.grace != nil {
		return
	}
	c.grace = time.AfterFunc(s.grace, func() { c.closeIf(phNew) })
}

// AwaitIdle blocks until no request is in flight, no hijacked connection is
// open and no connection is busy (reading or handling a request, or accepted
// and within its grace), then returns nil; or until ctx is done, returning
// ctx.Err(). It does not poll: every completion wakes it, so it returns as
// soon as the last one ends. Call it after CloseListeners.
func (s *Server) AwaitIdle(ctx context.Context) error {
	for {
		if s.idle() {
			s.finish()
			return nil
		}
		select {
		case <-s.wakeCh:
		case <-ctx.Done():
			if s.idle() {
				s.finish()
				return nil
			}
			return ctx.Err()
		}
	}
}

// idle reports whether nothing is in flight. The order of the reads matters;
// see requestCounter.sum.
func (s *Server) idle() bool {
	return s.handlers.sum() == 0 && s.busy.Load() == 0 && s.hijacked.Load() == 0
}

// requests is the number of running handlers that did not hijack.
func (s *Server) requests() int64 {
	n := s.handlers.sum() - s.hijackedInHandler.Load()
	if n < 0 { // the two reads are not one snapshot
		n = 0
	}
	return n
}

// ForceClose closes every connection that is still open, which ends their
// requests (their contexts are cancelled) and hijacked connections, and
// returns how many were cut: requests whose handler was still running,
// HTTP/1.1 requests still being read (bytes arrived, handler not yet called)
// and hijacked connections still open. It does not wait for the handlers to
// return.
func (s *Server) ForceClose() int {
	if !s.closed.Swap(true) {
		_ = s.ln.Close() // CloseListeners was skipped
	}
	n := s.requests() + s.hijacked.Load()
	s.mu.Lock()
	for c := range s.conns {
		if c.phase.Load() == phReading {
			n++
		}
	}
	s.mu.Unlock()
	s.closeAll()
	s.finish()
	return int(n)
}

// closeAll closes every tracked connection now.
func (s *Server) closeAll() {
	s.mu.Lock()
	cs := make([]*trackedConn, 0, len(s.conns))
	for c := range s.conns {
		cs = append(cs, c)
	}
	s.mu.Unlock()
	for _, c := range cs {
		_ = c.Close()
	}
}

// finish ends this server's drain: GOAWAY for HTTP/2 connections that began
// after CloseListeners, idle HTTP/1 connections closed, and Serve released.
func (s *Server) finish() {
	s.finishOnce.Do(func() {
		s.goAway()
		var idle []*trackedConn
		s.mu.Lock()
		s.finishing = true
		for c := range s.conns {
			if c.grace != nil {
				c.grace.Stop()
			}
			switch c.phase.Load() {
			case phIdle, phNew:
				idle = append(idle, c)
			}
		}
		s.checkGoneLocked()
		s.mu.Unlock()
		for _, c := range idle {
			if !c.closeIf(phIdle) {
				c.closeIf(phNew)
			}
		}
		close(s.finished)
	})
}

// InFlight reports requests whose handler is running (HTTP/1 and HTTP/2) and
// hijacked connections not yet closed.
func (s *Server) InFlight() lifecycle.InFlight {
	return lifecycle.InFlight{Requests: s.requests(), Hijacked: s.hijacked.Load()}
}

func (s *Server) track(c *trackedConn) {
	c.phase.Store(phNew)
	s.busy.Add(1)
	s.mu.Lock()
	s.conns[c] = struct{}{}
	late := s.finishing
	if s.closed.Load() && !late {
		s.startGraceLocked(c)
	}
	s.mu.Unlock()
	if late {
		// Accepted as the listener closed, after the drain ended here.
		c.closeIf(phNew)
	}
}

func (s *Server) untrack(c *trackedConn) {
	s.mu.Lock()
	if _, ok := s.conns[c]; ok {
		delete(s.conns, c)
		if c.grace != nil {
			c.grace.Stop()
		}
		s.checkGoneLocked()
	}
	s.mu.Unlock()
}

// checkGoneLocked closes allGone once finish ran and no connection is left.
func (s *Server) checkGoneLocked() {
	if s.finishing && !s.gone && len(s.conns) == 0 {
		s.gone = true
		close(s.allGone)
	}
}

// busyChanged keeps the busy count in step with a phase change.
func (s *Server) busyChanged(was, is bool) {
	switch {
	case was && !is:
		s.busy.Add(-1)
		if s.closed.Load() {
			s.wake()
		}
	case !was && is:
		s.busy.Add(1)
	}
}

// wake tells AwaitIdle to re-check; it never blocks.
func (s *Server) wake() {
	select {
	case s.wakeCh <- struct{}{}:
	default:
	}
}

var _ lifecycle.Server = (*Server)(nil)
