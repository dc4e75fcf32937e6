package grpcresolver

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"github.com/drainkit/drainkit/registry"
)

// Identity checks. A provider built on drainkit names itself in each
// call's response header metadata (registry.IdentityMetadata,
// "<service>/<instance id>", grpcdrain.WithIdentity), also when it lacks
// the method called (grpcdrain answers UNIMPLEMENTED through its
// interceptors); DialOptions installs interceptors that compare the
// service with the one the target names. A mismatch (the view's address
// now serves another service: a recycled pod IP) is a connect-level
// failure of that address: the answer is discarded (the call's reply is
// reset, never returned), the address is ejected from what the resolver
// gives grpc-go, for identityEjection times the number of its ejections
// (capped at identityEjectionMax). A unary call is sent again (at most
// identityAttempts tries in all) only when that is safe: the other service
// answered UNIMPLEMENTED (it lacks the method: nothing ran), or the method
// is one DialOptions was told is idempotent. Otherwise a method of the same
// name there ran the call, and it fails with codes.Unavailable, not sent
// again. A stream is not replayed: it fails with codes.Unavailable at its
// first header. An answer without the metadata (a provider not built on
// drainkit) passes.
const (
	identityAttempts     = 3
	identityEjection     = 5 * time.Second
	identityEjectionMax  = 5 * time.Minute
	identityMismatchText = "grpcresolver: the address answered as another service"
)

// target is what the interceptors know of a ClientConn's target.
type target struct {
	key  string // the target's service path: the resolvers' key
	want string // the service providers must name; "" checks nothing
}

// targetOf returns what the interceptors need of cc's target, parsed once.
func (b *Builder) targetOf(cc *grpc.ClientConn) target {
	raw := cc.Target()
	if t, ok := b.targets.Load(raw); ok {
		return t.(target)
	}
	var t target
	if u, err := url.Parse(raw); err == nil && u.Scheme == b.opts.Scheme {
		t.key = strings.TrimPrefix(u.Path, "/")
		t.want = t.key
		if b.fixed != nil {
			t.want = b.fixed.View().Service
		}
	}
	if t.want != "" { // a fixed Watcher without a view yet: ask again next call
		b.targets.Store(raw, t)
	}
	return t
}

// mismatch returns the identity in md when it names another service than
// want; "" when it names want or is absent.
func mismatch(md metadata.MD, want string) string {
	v := md.Get(registry.IdentityMetadata)
	if len(v) == 0 {
		return ""
	}
	if svc, _, _ := strings.Cut(v[0], "/"); svc == want {
		return ""
	}
	return v[0]
}

// wrongService is the error of a call answered as another service; ran
// says the call was not sent again because that service ran it.
func wrongService(addr, got, want string, ran bool) error {
	const notResent = "; not sent again: a method of that name ran it there, and it is not one DialOptions was told is idempotent"
	extra := ""
	if ran {
		extra = notResent
	}
	return status.Errorf(codes.Unavailable, "%s: %s answered as %q, want an instance of %q (an address reused by another service?)%s",
		identityMismatchText, addr, got, want, extra)
}

// checker is the identity check of the ClientConns made with one
// DialOptions call: its Builder and the methods it was told are idempotent.
type checker struct {
	b          *Builder
	idempotent methodSet
}

// methodSet is a set of methods: full method names ("/pkg.Service/Method")
// and whole services ("pkg.Service"), named as in a service config's
// methodConfig (see serviceConfig).
type methodSet map[string]struct{}

func newMethodSet(names []string) methodSet {
	m := methodSet{}
	for _, n := range names {
		if svc, method, _ := strings.Cut(strings.TrimPrefix(n, "/"), "/"); method != "" {
			m["/"+svc+"/"+method] = struct{}{}
		} else {
			m[svc] = struct{}{}
		}
	}
	return m
}

// has reports whether the set names fullMethod ("/pkg.Service/Method") or
// its service.
func (m methodSet) has(fullMethod string) bool {
	if _, ok := m[fullMethod]; ok {
		return true
	}
	svc, _, _ := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	_, ok := m[svc]
	return ok
}

// unaryIdentity is the unary client interceptor of the identity check.
func (c *checker) unaryIdentity(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	b := c.b
	t := b.targetOf(cc)
	if t.want == "" {
		return invoker(ctx, method, req, reply, cc, opts...)
	}
	var err error
	for range identityAttempts {
		var md metadata.MD
		var p peer.Peer
		err = invoker(ctx, method, req, reply, cc, append(opts[:len(opts):len(opts)], grpc.Header(&md), grpc.Peer(&p))...)
		got := mismatch(md, t.want)
		if got == "" {
			return err
		}
		if r, ok := reply.(interface{ Reset() }); ok {
			r.Reset() // the other service's answer is never returned
		}
		addr := addrOf(&p)
		b.ejectAddr(t.key, addr, got)
		// UNIMPLEMENTED: the other service lacks the method (grpcdrain's
		// unknown-service handler, or a generated Unimplemented stub), so
		// nothing ran. Any other answer came from a method of that name.
		if status.Code(err) != codes.Unimplemented && !c.idempotent.has(method) {
			return wrongService(addr, got, t.want, true)
		}
		err = wrongService(addr, got, t.want, false)
		if ctx.Err() != nil {
			break
		}
	}
	return err
}

// streamIdentity is the stream client interceptor of the identity check.
func (b *Builder) streamIdentity(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	t := b.targetOf(cc)
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil || t.want == "" {
		return cs, err
	}
	return &checkedStream{ClientStream: cs, b: b, t: t}, nil
}

// checkedStream checks the provider's identity at the stream's header,
// before the first message is returned.
type checkedStream struct {
	grpc.ClientStream
	b    *Builder
	t    target
	once sync.Once // Header and RecvMsg may race
	err  error
}

// check waits for the stream's header and checks it, once.
func (s *checkedStream) check() error {
	s.once.Do(func() {
		md, err := s.ClientStream.Header()
		if err != nil {
			return // the stream failed before its header: RecvMsg says how
		}
		if got := mismatch(md, s.t.want); got != "" {
			p, _ := peer.FromContext(s.ClientStream.Context())
			addr := addrOf(p)
			s.b.ejectAddr(s.t.key, addr, got)
			s.err = wrongService(addr, got, s.t.want, false)
		}
	})
	return s.err
}

// Header implements grpc.ClientStream: the header, once checked.
func (s *checkedStream) Header() (metadata.MD, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	return s.ClientStream.Header()
}

// RecvMsg implements grpc.ClientStream: no message of another service.
func (s *checkedStream) RecvMsg(m any) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.ClientStream.RecvMsg(m)
}

func addrOf(p *peer.Peer) string {
	if p == nil || p.Addr == nil {
		return ""
	}
	return p.Addr.String()
}

// ejectAddr ejects addr from the resolvers of the target key (every
// ClientConn of that target: the address is wrong for all of them).
func (b *Builder) ejectAddr(key, addr, got string) {
	b.mu.Lock()
	rs := make([]*res, 0, len(b.resolvers[key]))
	for r := range b.resolvers[key] {
		rs = append(rs, r)
	}
	b.mu.Unlock()
	for _, r := range rs {
		r.eject(addr, got)
	}
}

// ejection is an address the resolver keeps from grpc-go.
type ejection struct {
	until time.Time
	count int
	timer *time.Timer // gives the address back when the ejection ends
}

// eject keeps addr out of the state given to grpc-go for its ejection
// time, and gives grpc-go the state without it at once (UpdateState returns
// once the balancer has it, so a retry does not go there again). An
// address the view does not list (peer and view spell it differently) is
// logged and not ejected.
func (r *res) eject(addr, got string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || !r.lists(addr) {
		r.log.Warn("grpcresolver: an instance answered as another service, and its address is not in the view as such; not ejected",
			"addr", addr, "answered_as", got)
		return
	}
	e := r.ejected[addr]
	if e == nil {
		e = &ejection{}
		r.ejected[addr] = e
	}
	if time.Now().Before(e.until) {
		return // already out: a call that went there before the ejection
	}
	e.count++
	d := min(identityEjection*time.Duration(e.count), identityEjectionMax)
	e.until = time.Now().Add(d)
	e.timer = time.AfterFunc(d, func() { r.offer(r.w.View()) })
	r.log.Warn("grpcresolver: instance ejected: it answered as another service (a reused address?); its answer was discarded",
		"addr", addr, "answered_as", got, "for_ms", d.Milliseconds(), "ejections", e.count)
	r.cc.UpdateState(r.stateLocked())
}

// pruneLocked forgets the ejections that are over for addresses the view
// no longer lists (their count matters only while an address stays).
func (r *res) pruneLocked() {
	if len(r.ejected) == 0 {
		return
	}
	now := time.Now()
	for addr, e := range r.ejected {
		if !now.Before(e.until) && !r.lists(addr) {
			delete(r.ejected, addr)
		}
	}
}

// lists reports whether the current view has an endpoint at addr.
func (r *res) lists(addr string) bool {
	for _, ep := range state(r.view, r.scheme).Endpoints {
		if ep.Addresses[0].Addr == addr {
			return true
		}
	}
	return false
}
