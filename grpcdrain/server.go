package grpcdrain

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/lifecycle"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
)

// Server runs a grpc-go server on one listener as a lifecycle.Server. Create
// it with New and add it with Lifecycle.AddServer; the lifecycle calls its
// methods. All methods are safe for concurrent use.
type Server struct {
	lc          *lifecycle.Lifecycle
	hooks       lifecycle.ServerHooks // from Serve, before the first call
	ln          net.Listener
	register    func(*grpc.Server)
	build       func(...grpc.ServerOption) *grpc.Server // Adopt's; nil for New
	single      bool                                    // WithSingleServer
	grpcOpts    []grpc.ServerOption
	health      *health.Server
	services    []string
	goAwayAfter time.Duration
	ident       metadata.MD // the identity's header metadata (set before Serve builds a server); nil: none
	identSet    bool        // WithIdentity was given: the registrars are not asked

	// Request path: the phase every call reads (through the pointer) is
	// never written by it; the counters every call writes are striped, each
	// stripe on its own cache lines.
	phase  *syncx.Phase[phase]
	wake   syncx.Wake // "something ended, re-check" for AwaitIdle
	_      syncx.Pad
	counts syncx.Counter // by kind: calls, streams

	watchCtx   context.Context // cancelled when the listeners close: health Watch streams end
	endWatches context.CancelFunc

	reapOnce sync.Once
	serving  atomic.Bool
	orphaned atomic.Bool // Serve failed and returned: finish reaps
	forced   atomic.Bool // ForceClose ran (before finished): Serve reaps at once

	mu       sync.Mutex
	closeErr error       // the listener's Close error
	cur      *generation // accepting; nil before Serve and after CloseListeners
	spare    *generation // accepts from LameDuck on
	live     map[*generation]struct{}
	conns    map[*conn]struct{}
	wg       sync.WaitGroup // generations' Serve and GracefulStop goroutines
}

// Option configures New.
type Option func(*Server)

// WithServerOptions adds grpc.ServerOptions (credentials, keepalive,
// interceptors, stats handlers, ...) to every grpc.Server that New's Server
// builds, after drainkit's own interceptors, which are installed with
// grpc.ChainUnaryInterceptor and grpc.ChainStreamInterceptor. The caller's
// interceptors keep working, chained or not: chained ones run inside
// drainkit's, and one set with grpc.UnaryInterceptor or
// grpc.StreamInterceptor runs outside them (grpc-go runs it first). Either
// way a call stays counted as in flight exactly while drainkit's
// interceptor runs, panics included, so a recovery interceptor of the
// caller's, wherever it sits, leaves no call counted. Pass stats handlers
// with WithStatsHandler instead of grpc.StatsHandler, so that a connection
// context of the application's cannot cancel calls at its signal.
func WithServerOptions(opts ...grpc.ServerOption) Option {
	return func(s *Server) { s.grpcOpts = append(s.grpcOpts, opts...) }
}

// WithHealthServer makes the Server drive hs (instead of a health server of
// its own) and register it on every grpc.Server unless register already
// registered a grpc.health.v1.Health service, which must then be hs.
func WithHealthServer(hs *health.Server) Option {
	return func(s *Server) { s.health = hs }
}

// WithHealthServices names services whose health status follows the
// lifecycle like the overall server's (""). Statuses of other services are
// left to the caller until the drain starts, when every status becomes
// NOT_SERVING.
func WithHealthServices(names ...string) Option {
	return func(s *Server) { s.services = append(s.services, names...) }
}

// WithSingleServer makes the Server build one grpc.Server only (one call
// of New's register or Adopt's build, when Serve starts), for a server that
// cannot be built twice, such as one a framework builds and registers once.
// That server serves from Serve to the end of the drain, which costs the
// drain its earliest way to move clients: grpc-go sends GOAWAY only by
// stopping a whole grpc.Server (GracefulStop), so a single server cannot
// send it while the listener stays open. Compared with the default
// (several servers, see New):
//
//   - connections opened before t0 get GOAWAY when the listener closes at
//     the end of the propagation window, not at t0; until then a client
//     that has not learned of the drain keeps calling on them (and is
//     served), and a client whose resolver re-resolves only on GOAWAY or a
//     lost connection (grpc-go's dns resolver) learns of the drain only then;
//   - connections opened during the window are not rotated (WithGoAwayAfter
//     has no effect);
//   - health still goes NOT_SERVING at t0, so clients that check health
//     (client-side health checking, a health-checking load balancer, the
//     kubelet's gRPC probe) move at t0, and Draining channels close at t0.
//
// Everything else is unchanged: the count of calls in flight, the window's
// arrivals, GracefulStop when the listener closes, AwaitIdle, and the force
// stop at drain.timeout. A server option
// keepalive.ServerParameters{MaxConnectionAge: ...} makes grpc-go send each
// connection GOAWAY at that age whatever the drain, which bounds how long a
// client stays on one connection.
func WithSingleServer() Option {
	return func(s *Server) { s.single = true }
}

// DefaultGoAwayAfter is the default for WithGoAwayAfter.
const DefaultGoAwayAfter = time.Second

// WithGoAwayAfter sets how old a connection opened during the propagation
// window gets before it is sent GOAWAY: between d and 2d (default
// DefaultGoAwayAfter, 1s). Its calls succeed; the GOAWAY makes the client
// re-resolve and open its next connection, to another instance once the
// client has learned of the drain. 0 (or a negative d) sends such
// connections GOAWAY only when the listeners close. Connections opened
// before the drain get GOAWAY at its start, whatever d.
func WithGoAwayAfter(d time.Duration) Option {
	return func(s *Server) { s.goAwayAfter = max(d, 0) }
}

// New prepares a gRPC server to be served on ln and drained by lc, and
// returns the lifecycle.Server to pass to lc.AddServer (Add does both in one
// call):
//
//	lc.AddServer("grpc", grpcdrain.New(lc, ln, func(gs *grpc.Server) {
//		pb.RegisterGreeterServer(gs, greeter)
//	}, grpcdrain.WithServerOptions(grpc.Creds(creds))))
//
// The Server builds its *grpc.Server values itself, with grpc.NewServer, its
// own interceptors and the options given with WithServerOptions, then calls
// register on each to register the caller's services, and registers the
// health service (see WithHealthServer). It builds more than one: grpc-go
// can send GOAWAY only by stopping a whole grpc.Server, so at the drain's
// start a fresh one takes over the listener while the old one sends GOAWAY
// to its connections (see the package documentation). register is therefore
// called twice when Serve starts and once more for each rotation during the
// propagation window, from the Server's goroutines; it must only register
// services (the same implementations each time) and must not serve, stop
// or keep the *grpc.Server (WithSingleServer builds one only, at a cost in
// how early clients are told to move). A nil register serves only the
// health service. To drain a *grpc.Server that the caller or a framework
// builds, use Adopt.
//
// ln must be a listener that nothing else accepts from or closes; the Server
// closes it when the propagation window ends. New panics if lc or ln is nil.
// Until the lifecycle becomes READY, the health status of "" and of
// WithHealthServices' names is NOT_SERVING.
func New(lc *lifecycle.Lifecycle, ln net.Listener, register func(*grpc.Server), opts ...Option) *Server {
	if lc == nil || ln == nil {
		panic("grpcdrain: New needs a non-nil *lifecycle.Lifecycle and net.Listener")
	}
	return newServer(lc, ln, register, nil, opts)
}

// Adopt is New for a *grpc.Server that the caller (or a framework) builds:
// build returns a new grpc.Server made with grpc.NewServer(opts...) plus any
// options of the caller's, with the caller's services registered, not yet
// served. opts holds drainkit's unary and stream interceptors and the
// options given with WithServerOptions and WithStatsHandler; Adopt returns
// the lifecycle.Server to add to lc, as New does:
//
//	lc.AddServer("grpc", grpcdrain.Adopt(lc, ln, func(opts ...grpc.ServerOption) *grpc.Server {
//		gs := grpc.NewServer(append(opts, grpc.UnaryInterceptor(recovery))...)
//		pb.RegisterGreeterServer(gs, greeter)
//		return gs
//	}))
//
// The caller's interceptors may come before or after opts, chained or set
// with grpc.UnaryInterceptor and grpc.StreamInterceptor, and may recover
// panics: a call is counted as in flight exactly while drainkit's
// interceptor runs, panics included. Placing opts first makes drainkit's
// interceptors the outermost chained ones, so calls that a caller's chained
// interceptor rejects or delays still count as arrivals and in flight. A
// server a framework builds is adopted the same way, by passing opts through
// the framework's option for raw grpc.ServerOptions and returning its
// *grpc.Server.
//
// build is called as New calls register: twice when Serve starts and once
// more for each rotation during the propagation window, from the Server's
// goroutines, because telling clients to move while the listener stays open
// takes more than one grpc.Server (see New). With WithSingleServer it is
// called once, and the drain moves clients later; see WithSingleServer for
// what that loses. The Server serves each grpc.Server itself (on a listener
// of its own over ln) and stops it; build must not serve, stop or keep it.
// If the built server has no grpc.health.v1.Health service, the Server
// registers its health server (see WithHealthServer); if it has one, that
// must be the server given with WithHealthServer, or the drain's NOT_SERVING
// never reaches it. The Server panics, in the goroutine that called build,
// if build returns nil. Adopt panics if lc, ln or build is nil.
func Adopt(lc *lifecycle.Lifecycle, ln net.Listener, build func(opts ...grpc.ServerOption) *grpc.Server, opts ...Option) *Server {
	if lc == nil || ln == nil || build == nil {
		panic("grpcdrain: Adopt needs a non-nil *lifecycle.Lifecycle, net.Listener and build function")
	}
	return newServer(lc, ln, nil, build, opts)
}

func newServer(lc *lifecycle.Lifecycle, ln net.Listener, register func(*grpc.Server), build func(...grpc.ServerOption) *grpc.Server, opts []Option) *Server {
	s := &Server{
		lc:          lc,
		ln:          ln,
		register:    register,
		build:       build,
		goAwayAfter: DefaultGoAwayAfter,
		phase:       syncx.NewPhase(finished),
		wake:        syncx.NewWake(),
		live:        map[*generation]struct{}{},
		conns:       map[*conn]struct{}{},
	}
	for _, o := range opts {
		o(s)
	}
	if s.health == nil {
		s.health = health.NewServer()
	}
	s.watchCtx, s.endWatches = context.WithCancel(context.Background())
	s.setHealth(healthpb.HealthCheckResponse_NOT_SERVING)
	return s
}

// Health returns the health server the Server drives. Its statuses for ""
// and WithHealthServices' names belong to the Server; do not call its
// Resume, which would undo the drain's NOT_SERVING.
func (s *Server) Health() *health.Server { return s.health }

// Serve builds the first two grpc.Servers (calling register), then accepts
// connections on the listener and hands each to the grpc.Server currently
// accepting. It reports each call and stream other than health checks to h
// (the lifecycle's ServerHooks). It keeps health in step with the
// lifecycle: SERVING in READY, NOT_SERVING otherwise. After CloseListeners, it waits until the drain is
// over for this server (AwaitIdle succeeded or ForceClose ran) and every
// grpc.Server has stopped (up to 2s more, after which the remaining
// connections are closed), then returns nil.
//
// If accepting fails for another reason, Serve closes the listener and
// returns an error naming its address; the connections already open keep
// being served through the drain that the lifecycle then starts. Calling
// Serve twice is an error.
func (s *Server) Serve(h lifecycle.ServerHooks) error {
	if !s.serving.CompareAndSwap(false, true) {
		return errors.New("grpcdrain: Serve called twice")
	}
	s.hooks = h // before the first call: grpc-go starts handlers from Serve below
	if !s.identSet {
		s.ident = registeredIdentity(s.lc) // likewise
	}
	stopFollowing := s.followLifecycle()
	defer stopFollowing()

	first := s.newGeneration(false)
	var spare *generation
	if !s.single {
		spare = s.newGeneration(true)
	}
	s.mu.Lock()
	var unused []*generation
	switch {
	case s.phase.Reached(closed):
		unused = []*generation{first, spare}
	case s.phase.Reached(lameDuck) && spare != nil: // the drain began before this goroutine ran
		s.startLocked(spare)
		unused = []*generation{first}
	default:
		s.spare = spare
		s.startLocked(first)
	}
	s.mu.Unlock()
	for _, g := range unused {
		if g != nil {
			g.gs.Stop()
		}
	}

	if err := s.acceptLoop(); err != nil {
		_ = s.ln.Close()
		s.orphaned.Store(true)
		if s.phase.Reached(finished) { // the drain ended while we failed; else finish reaps
			s.reap(false)
		}
		return fmt.Errorf("grpcdrain: serving on %s: %w", s.ln.Addr(), err)
	}
	<-s.phase.Done(finished)
	s.reap(s.forced.Load())
	return nil
}

// acceptLoop accepts until the listener closes (nil after CloseListeners)
// or fails. Temporary errors (such as EMFILE) are retried after 5ms,
// doubling up to 1s, like grpc.Server.Serve.
func (s *Server) acceptLoop() error {
	var delay time.Duration
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if s.phase.Reached(closed) {
				return nil
			}
			if te, ok := err.(interface{ Temporary() bool }); ok && te.Temporary() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				t := time.NewTimer(delay)
				select {
				case <-t.C:
				case <-s.phase.Done(closed):
					t.Stop()
				}
				continue
			}
			return err
		}
		delay = 0
		c := &conn{Conn: nc, s: s}
		c.local = &Addr{Addr: nc.LocalAddr(), s: s}
		if !s.track(c) || !s.dispatch(c) {
			_ = c.close()
		}
	}
}

// LameDuck starts the drain for this server (t0): health goes NOT_SERVING
// for every service and ignores later attempts to set SERVING
// (health.Server.Shutdown); Draining channels close; a fresh grpc.Server
// takes over accepting, and the one that served until now sends GOAWAY to
// all its connections and stops once their calls have ended
// (grpc.Server.GracefulStop). The listener stays open: new connections are
// accepted and served during the propagation window (and get GOAWAY
// themselves, see WithGoAwayAfter). No call is cancelled. It does not wait
// for anything and is idempotent.
func (s *Server) LameDuck() {
	if !s.phase.Advance(lameDuck) {
		return
	}
	s.health.Shutdown()
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.cur; old != nil && !old.window && s.spare != nil {
		s.startLocked(s.spare)
		s.spare = nil
		s.retireLocked(old)
	}
}

// CloseListeners closes the listener, so new connections are refused, sends
// GOAWAY to every connection that has not had it yet, and ends health Watch
// streams (with codes.Unavailable). Calls and streams in flight continue. It
// returns the listener's Close error, if any, and is idempotent.
func (s *Server) CloseListeners() error {
	s.closeListeners()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closeErr
}

// closeListeners enters the closed phase (after lame duck) once.
func (s *Server) closeListeners() {
	s.LameDuck()
	if !s.phase.Advance(closed) {
		return
	}
	err := s.ln.Close()
	s.mu.Lock()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		s.closeErr = err
	}
	s.cur = nil
	for g := range s.live {
		s.retireLocked(g)
	}
	spare := s.spare
	s.spare = nil
	s.mu.Unlock()
	if spare != nil {
		spare.gs.Stop() // never served
	}
	s.endWatches()
	s.wake.Notify()
}

// AwaitIdle blocks until no call or stream is in flight (nil) or ctx is done
// (ctx.Err()). Every handler's return wakes it, without polling, so it
// returns as soon as the last one ends. Health Watch streams do not count
// (CloseListeners ends them). Call it after CloseListeners.
func (s *Server) AwaitIdle(ctx context.Context) error {
	if err := syncx.AwaitIdle(ctx, s.wake, s.idle); err != nil {
		return err
	}
	s.finish(false)
	return nil
}

// idle reports whether no call or stream was running at one instant (see
// syncx.Counter).
func (s *Server) idle() bool {
	calls, streams := s.counts.Snapshot()
	return calls == 0 && streams == 0
}

// ForceClose closes the listener (if CloseListeners did not) and every
// connection, which cancels the contexts of the calls and streams still
// running (their clients see codes.Unavailable) and so lets every
// grpc.Server's GracefulStop end once their handlers return, and returns
// how many calls and streams were in flight. It does not wait for their
// handlers to return, and Serve waits for them at most lingerMax (2s).
func (s *Server) ForceClose() int {
	calls, streams := s.counts.Snapshot()
	s.closeListeners()
	s.cut()
	s.forced.Store(true)
	s.finish(true)
	return int(calls + streams)
}

// InFlight reports the unary calls (Calls) and streaming calls (Streams)
// whose handlers are running, health Watch streams excepted.
func (s *Server) InFlight() lifecycle.InFlight {
	calls, streams := s.counts.Snapshot()
	return lifecycle.InFlight{Calls: calls, Streams: streams}
}

// finish ends this server's drain and releases Serve. If Serve has already
// returned (it failed), finish reaps the grpc.Servers itself.
func (s *Server) finish(force bool) {
	if s.phase.Advance(finished) && s.orphaned.Load() {
		s.reap(force)
	}
}

// lingerMax bounds how long, after the drain is over, the grpc.Servers may
// take to stop (flush the last statuses, close their connections) before
// their connections are closed.
const lingerMax = 2 * time.Second

// reap waits for every grpc.Server to stop, up to lingerMax (not at all if
// force: ForceClose has cut already), then closes what is left and waits up
// to lingerMax more. A handler that ignores its context's cancellation can
// outlive it, and so can the GracefulStop that waits for it (grpc-go waits
// for every handler); both end when the handler returns.
func (s *Server) reap(force bool) {
	s.reapOnce.Do(func() {
		if !force && syncx.WaitFor(&s.wg, lingerMax) {
			return
		}
		s.cut()
		syncx.WaitFor(&s.wg, lingerMax)
	})
}

// cut closes every connection, which ends their transports and cancels
// their calls' contexts: all that grpc.Server.Stop would add to the
// GracefulStop every generation runs by then (cut is only called after
// closeListeners retired them all). cut never calls Stop: grpc-go before
// v1.85.0, which this module allows, deadlocks a Stop called while
// GracefulStop waits for a handler that ignores its context's cancellation
// (grpc-go#9393), holding the goroutine until the handler returns.
func (s *Server) cut() {
	s.mu.Lock()
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.close()
	}
}

// track records an accepted connection; false once the listener is closed.
func (s *Server) track(c *conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.phase.Reached(closed) {
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Server) untrack(c *conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

var _ lifecycle.Server = (*Server)(nil)
