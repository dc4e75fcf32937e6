package grpcdrain

import (
	"net"
	"sync"
	"time"

	"google.golang.org/grpc"
	healthgrpc "google.golang.org/grpc/health/grpc_health_v1"
)

// generation is one *grpc.Server and the virtual listener it serves. Only one
// generation accepts at a time (Server.cur); grpc-go can send GOAWAY only by
// stopping a whole grpc.Server (GracefulStop), which also closes what it
// listens on, so the drain retires generations instead: the retired one's
// connections get GOAWAY while the next one keeps accepting on the caller's
// listener.
type generation struct {
	s      *Server
	gs     *grpc.Server
	window bool // accepts during the propagation window

	services func() map[string]struct{} // gs's services, read at the first unknown call (unknown.go)

	ch   chan *conn    // hand-off from Server.dispatch; unbuffered
	done chan struct{} // closed by Close: Accept fails, grpc.Server.Serve returns
	once sync.Once

	// Guarded by Server.mu.
	stopping    bool
	rotateTimer *time.Timer // window generation: retire after its first connection
	retireTimer *time.Timer // window generation: GOAWAY once its connections are old enough
}

// newGeneration builds a grpc.Server with drainkit's interceptors first, the
// caller's options, the caller's services and the health service (unless
// the caller registered one). An adopted server is built by the caller's
// build function from the same options.
func (s *Server) newGeneration(window bool) *generation {
	g := &generation{s: s, window: window, ch: make(chan *conn), done: make(chan struct{})}
	g.services = sync.OnceValue(g.serviceNames)
	opts := append([]grpc.ServerOption{
		grpc.ChainUnaryInterceptor(s.unary),
		grpc.ChainStreamInterceptor(s.stream),
		grpc.UnknownServiceHandler(g.unknown), // before the caller's options: one of theirs replaces it
	}, s.grpcOpts...)
	var gs *grpc.Server
	if s.build != nil {
		if gs = s.build(opts...); gs == nil {
			panic("grpcdrain: Adopt's build function returned a nil *grpc.Server")
		}
	} else {
		gs = grpc.NewServer(opts...)
		if s.register != nil {
			s.register(gs)
		}
	}
	if _, ok := gs.GetServiceInfo()[healthgrpc.Health_ServiceDesc.ServiceName]; !ok {
		healthgrpc.RegisterHealthServer(gs, s.health)
	}
	g.gs = gs
	return g
}

// Accept returns the next connection the Server hands to this generation.
// A connection received after Close (the select below picks at random when
// both are ready) goes to the successor instead: a window generation is
// retired goAwayAfter after its Close, and a connection it took later would
// get GOAWAY younger than goAwayAfter.
func (g *generation) Accept() (net.Conn, error) {
	select {
	case c := <-g.ch:
		select {
		case <-g.done:
			if !g.s.dispatch(c) {
				_ = c.close()
			}
		default:
			return c, nil
		}
	case <-g.done:
	}
	return nil, &net.OpError{Op: "accept", Net: g.s.ln.Addr().Network(), Addr: g.s.ln.Addr(), Err: net.ErrClosed}
}

// Close stops this generation's accepting; the caller's listener stays open.
func (g *generation) Close() error {
	g.once.Do(func() { close(g.done) })
	return nil
}

// Addr is the caller's listener's address.
func (g *generation) Addr() net.Addr { return g.s.ln.Addr() }

// startLocked makes g the accepting generation and serves it. s.mu is held.
func (s *Server) startLocked(g *generation) {
	s.cur = g
	s.live[g] = struct{}{}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		_ = g.gs.Serve(g) // returns when g is closed or stopped
	}()
}

// retireLocked sends GOAWAY to g's connections: g stops accepting and
// grpc.Server.GracefulStop runs in the background until g's calls have
// ended and its connections are closed. s.mu is held.
func (s *Server) retireLocked(g *generation) {
	if g.stopping {
		return
	}
	g.stopping = true
	for _, t := range []*time.Timer{g.rotateTimer, g.retireTimer} {
		if t != nil {
			t.Stop()
		}
	}
	_ = g.Close()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		g.gs.GracefulStop()
		s.mu.Lock()
		delete(s.live, g)
		s.mu.Unlock()
	}()
}

// dispatch hands c to the accepting generation and reports whether it did;
// false means the listeners are closed (the caller closes c).
func (s *Server) dispatch(c *conn) bool {
	for {
		s.mu.Lock()
		g := s.cur
		s.mu.Unlock()
		if g == nil {
			return false
		}
		select {
		case g.ch <- c:
			s.handedTo(g)
			return true
		case <-g.done: // retired meanwhile: try its successor
		case <-s.phase.Done(closed):
			return false
		}
	}
}

// handedTo arms a window generation's rotation on its first connection: a
// connection opened during the propagation window is sent GOAWAY when it is
// between goAwayAfter and twice that old, so that a client which still
// routes to this instance re-resolves and moves, while its calls succeed.
func (s *Server) handedTo(g *generation) {
	if !g.window || s.goAwayAfter <= 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g.rotateTimer != nil || g.stopping || s.phase.Reached(closed) {
		return
	}
	g.rotateTimer = time.AfterFunc(s.goAwayAfter, func() { s.rotate(g) })
}

// rotate replaces the window generation g with a new one, which accepts from
// now on, and retires g goAwayAfter later, so that each of g's connections
// (accepted since g's first, goAwayAfter ago) is between goAwayAfter and
// twice that old when it gets GOAWAY.
func (s *Server) rotate(g *generation) {
	next := s.newGeneration(true) // the caller's register runs without our lock
	s.mu.Lock()
	if s.cur != g || s.phase.Reached(closed) {
		s.mu.Unlock()
		next.gs.Stop() // never served: returns at once
		return
	}
	s.startLocked(next)
	_ = g.Close()
	g.retireTimer = time.AfterFunc(s.goAwayAfter, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.retireLocked(g)
	})
	s.mu.Unlock()
}
