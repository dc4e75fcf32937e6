package httpdrain

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/lifecycle"
)

// Server runs one *http.Server on one listener as a lifecycle.Server. Create
// it with New and add it with Lifecycle.AddServer; the lifecycle calls its
// methods. All methods are safe for concurrent use.
type Server struct {
	hooks  lifecycle.ServerHooks // from Serve; arrivals before it are not traffic the lifecycle sees
	srv    *http.Server
	ln     net.Listener // the caller's listener
	wl     *listener    // what net/http accepts from
	useTLS bool
	grace  time.Duration
	ident  []string     // the IdentityHeader value, shared by every response; nil: none
	shadow *http.Server // owns the HTTP/2 server's GOAWAY hook; nil without HTTP/2

	userConnState   func(net.Conn, http.ConnState)
	userConnContext func(context.Context, net.Conn) context.Context

	// Request path. The counters written per request sit on their own cache
	// lines, away from what every request reads.
	phase             *syncx.Phase[phase]
	wake              syncx.Wake   // "something finished, re-check" for AwaitIdle
	hijackedInHandler atomic.Int64 // handlers that hijacked and still run
	_                 syncx.Pad
	handlers          syncx.Counter // running handlers, hijacked or not (kind 0)
	busy              atomic.Int64  // connections in a busy phase
	_                 syncx.Pad
	hijacked          atomic.Int64
	unclosed          atomic.Int64 // tracked connections that nobody has closed yet

	serving atomic.Bool
	bg      sync.WaitGroup // closers of idle connections; Serve waits for them

	mu    sync.Mutex
	conns map[*trackedConn]struct{}
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

// WithIdentity makes every response carry the header Drainkit-Instance
// (registry.IdentityHeader) with the value "<service>/<instanceID>", so that
// consumers (package consumer) can tell that the address they called is
// still an instance of the service they meant, and not one another service
// took over (a recycled pod IP). Every response carries it, whatever the
// protocol: HTTP/1.1 keep-alive and HTTP/2, whose connection multiplexes
// concurrent streams, each of which a consumer checks on its own. The
// header is set before the handler runs; a handler may remove or replace
// it (Header().Del or Set) but must not write into its value slice, which
// every response shares: the request path allocates nothing for it. The
// root package sets it from the first registrar. An empty service sends
// nothing.
func WithIdentity(service, instanceID string) Option {
	return func(s *Server) {
		if service != "" {
			s.ident = []string{service + "/" + instanceID}
		}
	}
}

// unserved is the ServerHooks of a Server until Serve hands it the
// lifecycle's: a handler called without Serve (a benchmark of the request
// path) reports nothing.
type unserved struct{}

func (unserved) Arrived(lifecycle.Caller) {}
func (unserved) CancelledEarly()          {}

// New prepares srv to be served on ln and drained by a lifecycle, and returns the
// lifecycle.Server to pass to lc.AddServer; Add does both in one call:
//
//	httpdrain.Add(lc, "http", srv, ln)
//
// New modifies srv, so configure srv completely before calling it, and do not
// change it or call its Serve, Shutdown, Close or SetKeepAlivesEnabled
// afterwards: the lifecycle runs it. New wraps srv.Handler
// (http.DefaultServeMux when nil) with in-flight tracking, chains its own
// ConnState and ConnContext in front of any set by the caller (which keep
// working; their contexts' values reach every request, their cancellation
// does not: see ErrForceClosed), and installs net/http's HTTP/2 server through TLSNextProto (see
// the package documentation; a TLSNextProto set by the caller is kept).
//
// ln must yield plain connections. To serve TLS (and HTTP/2 over TLS), set
// srv.TLSConfig with Certificates, GetCertificate or GetConfigForClient:
// Serve then calls srv.ServeTLS. A listener that yields *tls.Conn makes
// Serve fail, since httpdrain could not see its connections close.
//
// srv.RegisterOnShutdown functions are never called: httpdrain does not call
// srv.Shutdown. Use Draining instead.
func New(srv *http.Server, ln net.Listener, opts ...Option) *Server {
	s := &Server{
		hooks: unserved{},
		srv:   srv,
		ln:    ln,
		grace: DefaultNewConnGrace,
		phase: syncx.NewPhase(gone),
		wake:  syncx.NewWake(),
		conns: map[*trackedConn]struct{}{},
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
	srv.Handler = &tracker{s: s, next: next, ident: s.ident}

	s.userConnState = srv.ConnState
	srv.ConnState = s.connState
	if srv.BaseContext != nil {
		srv.BaseContext = detachBase(srv.BaseContext)
	}
	s.userConnContext = srv.ConnContext
	srv.ConnContext = s.connContext
	s.setupHTTP2()
	return s
}

// Serve serves srv on the listener (with TLS when srv.TLSConfig has a
// certificate), reporting each request to h (the lifecycle's ServerHooks).
// After CloseListeners it waits until the drain is over for this
// server (AwaitIdle succeeded or ForceClose ran) and its connections have
// closed, then returns nil. HTTP/2 connections, idle after GOAWAY, are closed
// once they have written nothing for 50-100ms (net/http itself would keep
// them up to 1s unless the client closes them, and Go's client does not);
// anything left after 2s is closed. Any other end is an error naming the
// listener's address; calling Serve twice is an error.
func (s *Server) Serve(h lifecycle.ServerHooks) error {
	if !s.serving.CompareAndSwap(false, true) {
		return errors.New("httpdrain: Serve called twice")
	}
	s.hooks = h // before the first request: net/http starts handlers from Serve below
	var err error
	if s.useTLS {
		err = s.srv.ServeTLS(s.wl, "", "")
	} else {
		err = s.srv.Serve(s.wl)
	}
	if !s.phase.Reached(closed) {
		_ = s.ln.Close()
		return fmt.Errorf("httpdrain: serving on %s: %w", s.ln.Addr(), err)
	}
	<-s.phase.Done(finished)
	s.linger()
	s.bg.Wait()
	return nil
}

// linger waits, after the drain, until every connection has been closed,
// closing quiet HTTP/2 connections as it goes and everything at lingerMax.
func (s *Server) linger() {
	limit := time.NewTimer(lingerMax)
	defer limit.Stop()
	tick := time.NewTicker(lingerQuiet)
	defer tick.Stop()
	for {
		select {
		case <-s.phase.Done(gone):
			return
		case <-tick.C:
			s.closeQuietH2()
		case <-limit.C:
			s.closeAll()
			return
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
	if s.phase.Advance(lameDuck) {
		s.goAway()
	}
}

// CloseListeners closes the listener, sends GOAWAY to HTTP/2 connections
// opened since LameDuck, and starts closing idle HTTP/1.1 connections (those
// on which no byte of a next request has arrived) in the background, so that
// it returns at once however many there are. Connections accepted but still
// without a request are closed after the new-connection grace
// (WithNewConnGrace) unless a request begins. It returns the listener's Close
// error, if any.
func (s *Server) CloseListeners() error {
	s.LameDuck()
	first := s.phase.Advance(closed)
	err := s.ln.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	s.goAway()
	if first {
		s.bg.Add(1)
		go s.closeIdle()
	}
	s.wake.Notify()
	return err
}

// closeIdle closes the idle HTTP/1.1 connections and arms the grace of new
// ones, after the listeners closed. It runs in the background (s.bg).
func (s *Server) closeIdle() {
	defer s.bg.Done()
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
	for i, c := range idle {
		c.closeIf(phIdle)
		s.yield(i)
	}
}

// yield lets other goroutines run after every 64th connection closed in
// the background while work is still in flight: the requests that AwaitIdle
// waits for, and AwaitIdle itself, come first. Once nothing is in flight,
// the closing runs at full speed (Serve waits for it).
func (s *Server) yield(i int) {
	if i%64 == 63 && !s.idle() {
		runtime.Gosched()
	}
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
// soon as the last one ends. It waits for in-flight work only: idle
// connections, however many, are closed in the background and do not delay
// it. Call it after CloseListeners.
func (s *Server) AwaitIdle(ctx context.Context) error {
	if err := syncx.AwaitIdle(ctx, s.wake, s.idle); err != nil {
		return err
	}
	s.finish()
	return nil
}

// idle reports whether nothing is in flight. The order of the reads matters:
// a zero handler count means no handler ran at one instant
// (syncx.Counter), and a request can only begin on a busy connection
// (HTTP/1.1: StateActive precedes the handler; HTTP/2: the stream opens
// first), which stays busy until the handler is done (unless the client
// reset the stream); so busy, read afterwards, covers requests that began
// after that instant.
func (s *Server) idle() bool {
	n, _ := s.handlers.Snapshot()
	return n == 0 && s.busy.Load() == 0 && s.hijacked.Load() == 0
}

// requests is the number of running handlers that did not hijack.
func (s *Server) requests() int64 {
	n, _ := s.handlers.Snapshot()
	n -= s.hijackedInHandler.Load()
	if n < 0 { // the two reads are not one snapshot
		n = 0
	}
	return n
}

// ForceClose closes every connection that is still open, which ends their
// requests (their contexts are cancelled, with ErrForceClosed as the cause)
// and hijacked connections, and
// returns how many were cut: requests whose handler was still running,
// HTTP/1.1 requests still being read (bytes arrived, handler not yet called)
// and hijacked connections still open. It does not wait for the handlers to
// return.
func (s *Server) ForceClose() int {
	if s.phase.Advance(closed) {
		_ = s.ln.Close() // CloseListeners was skipped
	}
	n := s.requests() + s.hijacked.Load()
	s.mu.Lock()
	s.cancelAllLocked()
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
// after CloseListeners, idle and new HTTP/1 connections closed in the
// background, and Serve released. The phase moves to finished under s.mu,
// so that track sees either the connection set that closeLeft walks or the
// finished phase.
func (s *Server) finish() {
	s.mu.Lock()
	first := !s.phase.Reached(finished)
	if first {
		s.bg.Add(1)
		s.phase.Advance(finished)
	}
	s.mu.Unlock()
	if !first {
		return
	}
	s.goAway()
	go s.closeLeft()
	s.checkGone()
}

// closeLeft closes the connections left idle or new after the drain. It
// runs in the background (s.bg).
func (s *Server) closeLeft() {
	defer s.bg.Done()
	var idle []*trackedConn
	s.mu.Lock()
	for c := range s.conns {
		if c.grace != nil {
			c.grace.Stop()
		}
		switch c.phase.Load() {
		case phIdle, phNew:
			idle = append(idle, c)
		}
	}
	s.mu.Unlock()
	for i, c := range idle {
		if !c.closeIf(phIdle) {
			c.closeIf(phNew)
		}
		s.yield(i)
	}
}

// InFlight reports requests whose handler is running (HTTP/1 and HTTP/2) and
// hijacked connections not yet closed.
func (s *Server) InFlight() lifecycle.InFlight {
	return lifecycle.InFlight{Requests: s.requests(), Hijacked: s.hijacked.Load()}
}

func (s *Server) track(c *trackedConn) {
	c.phase.Store(phNew)
	s.busy.Add(1)
	s.unclosed.Add(1)
	s.mu.Lock()
	s.conns[c] = struct{}{}
	late := s.phase.Reached(finished)
	if s.phase.Reached(closed) && !late {
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
	}
	s.mu.Unlock()
}

// connClosed counts a connection closed by anyone (httpdrain, net/http, a
// hijacking handler or the client): it is gone for Serve, even if net/http
// has yet to report it closed.
func (s *Server) connClosed() {
	s.unclosed.Add(-1)
	s.checkGone()
}

// checkGone moves to the gone phase once the drain is finished and every
// connection has been closed. Both facts are written before it is called,
// so of two concurrent callers at least one sees both.
func (s *Server) checkGone() {
	if s.unclosed.Load() == 0 && s.phase.Reached(finished) {
		s.phase.Advance(gone)
	}
}

// busyChanged keeps the busy count in step with a phase change.
func (s *Server) busyChanged(was, is bool) {
	switch {
	case was && !is:
		s.busy.Add(-1)
		if s.phase.Reached(closed) {
			s.wake.Notify()
		}
	case !was && is:
		s.busy.Add(1)
	}
}

var _ lifecycle.Server = (*Server)(nil)
