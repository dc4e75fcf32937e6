// Package grpcresolver feeds grpc-go from a consumer.Watcher: a resolver for
// targets such as "drainkit:///orders", whose addresses follow the
// Watcher's candidate view (ordered, last-good on registry errors, sudden
// empty lists held). grpc-go's own machinery does the rest, configured
// through ServiceConfig: round_robin (under outlier_detection_experimental,
// failure-percentage ejection, when the program imports
// grpcresolver/outlierdetection) and client-side health checking, so an
// instance that goes NOT_SERVING as its drain begins (grpcdrain) leaves
// the rotation before its GOAWAY; calls not yet sent on a connection that
// received GOAWAY are retried transparently by grpc-go.
//
//	b, err := grpcresolver.NewBuilder(grpcresolver.Options{Source: func(service string) (registry.Source, error) {
//		return consulSource(service), nil
//	}})
//	...
//	conn, err := grpc.NewClient("drainkit:///orders", append(grpcresolver.DialOptions(b),
//		grpc.WithTransportCredentials(creds))...)
//
// This package does not import grpc-go's xds package: outlier detection is
// the opt-in import github.com/drainkit/drainkit/consumer/grpcresolver/outlierdetection
// (a module of its own), because grpc-go registers that balancer only from
// xds, which more than doubles a client's binary (about 15 MB to 40 MB).
// Calls that were sent are retried only for the methods DialOptions is told
// are idempotent, by grpc-go's retry policy within its retry throttling;
// an answer from another service than the target's is never returned (see
// DialOptions).
package grpcresolver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	_ "google.golang.org/grpc/health" // registers client-side health checking
	"google.golang.org/grpc/resolver"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/registry"
)

// Scheme is the default target scheme: "drainkit:///<service>".
const Scheme = "drainkit"

// DefaultEndpointScheme is the endpoint a resolver dials by default: an
// instance's "grpc" endpoint, as kratos's gRPC servers register it.
const DefaultEndpointScheme = "grpc"

// ServiceConfig is the default service config DialOptions installs:
// round_robin under grpc-go's outlier detection (an instance failing 50 %
// of at least 5 calls in a 1s interval is ejected for 5s times its
// ejection count, up to 5m, at most 50 % of the instances at once), and
// client-side health checking of the whole server (""). grpc-go uses the
// first listed policy it has registered: outlier detection when the
// program imports grpcresolver/outlierdetection, plain round_robin
// otherwise.
const ServiceConfig = `{
  "loadBalancingConfig": [{"outlier_detection_experimental": {
    "interval": "1s",
    "baseEjectionTime": "5s",
    "maxEjectionTime": "300s",
    "maxEjectionPercent": 50,
    "failurePercentageEjection": {"threshold": 50, "enforcementPercentage": 100, "minimumHosts": 2, "requestVolume": 5},
    "childPolicy": [{"round_robin": {}}]
  }}, {"round_robin": {}}],
  "healthCheckConfig": {"serviceName": ""}
}`

// Options configure a Builder.
type Options struct {
	// Scheme of the targets; "" means Scheme ("drainkit").
	Scheme string
	// EndpointScheme selects the endpoint dialled among an instance's
	// registry.Instance.Endpoints (a process serving HTTP and gRPC registers
	// one instance listing both); "" means "grpc". An instance whose
	// endpoints lack the scheme is left out; one that lists no endpoints is
	// dialled at its Address and Port. A view whose every instance is left
	// out is logged (once per streak) and shown in Builder.Status.
	EndpointScheme string
	// Source returns the registry.Source of the service a target names
	// (its path without the leading '/'). Required unless the Builder is
	// made with FromWatcher.
	Source func(service string) (registry.Source, error)
	// Watcher is the template of each target's WatcherOptions (EmptyHold,
	// MaxStaleness, backoff, Logger); Source and Service are set per target.
	Watcher consumer.WatcherOptions
}

// Builder is a resolver.Builder; one Watcher per target it builds, closed
// with the resolver.
type Builder struct {
	opts  Options
	fixed *consumer.Watcher

	targets   sync.Map // ClientConn target string -> target (identity.go)
	mu        sync.Mutex
	resolvers map[string]map[*res]struct{} // by target key (the service path), for ejections
}

// NewBuilder returns a Builder, or an error naming the missing field.
func NewBuilder(o Options) (*Builder, error) {
	if o.Source == nil {
		return nil, errors.New("grpcresolver: Options.Source is nil; want a function returning the service's registry.Source")
	}
	if o.Scheme == "" {
		o.Scheme = Scheme
	}
	if o.EndpointScheme == "" {
		o.EndpointScheme = DefaultEndpointScheme
	}
	return &Builder{opts: o, resolvers: map[string]map[*res]struct{}{}}, nil
}

// FromWatcher returns a Builder of scheme whose every target resolves from
// w (shared with, say, an HTTP consumer.Transport, which takes the
// instances' "http" endpoints where this takes their "grpc" ones); the
// resolvers do not close w. "" means Scheme.
func FromWatcher(scheme string, w *consumer.Watcher) *Builder {
	if scheme == "" {
		scheme = Scheme
	}
	return &Builder{opts: Options{Scheme: scheme, EndpointScheme: DefaultEndpointScheme}, fixed: w, resolvers: map[string]map[*res]struct{}{}}
}

// DialOptions returns the options that make a grpc.ClientConn use b and
// ServiceConfig as its default service config, with grpc-go's retry policy
// (gRPC A6) for the idempotent methods, each "package.Service/Method" or
// "package.Service" for all of its methods (as in a service config's
// methodConfig name): a call to one of them that failed with UNAVAILABLE,
// as calls in flight on an instance killed with kill -9 do, is retried on
// another instance, at most 3 attempts in all, within retry throttling (see
// retry.go: the same budget as consumer.RetryBudget's default). Mark only
// methods that are safe to run twice. A service config from the name
// resolver, if any, replaces this default.
//
// The options also check who answers: a provider built on drainkit names
// itself in each call's header metadata (registry.IdentityMetadata,
// grpcdrain.WithIdentity), also when it lacks the method. An answer naming
// another service than the target's (an address of the view reused by
// another service) is never returned (the reply is reset), and its address
// (the peer's host:port) leaves the addresses given to grpc-go for 5s
// times the number of its ejections (at most 5m). A unary call is then
// sent again at once, at most 3 tries in all and outside retry throttling,
// only when that is safe: the other service answered UNIMPLEMENTED (it
// lacks the method, so nothing ran) or the method is one of idempotent.
// Otherwise a method of the same name there ran it: the call fails with
// codes.Unavailable, not sent again. A stream, which cannot be replayed,
// fails with codes.Unavailable at its header. An answer without the
// metadata passes.
func DialOptions(b *Builder, idempotent ...string) []grpc.DialOption {
	c := &checker{b: b, idempotent: newMethodSet(idempotent)}
	return []grpc.DialOption{grpc.WithResolvers(b), grpc.WithDefaultServiceConfig(serviceConfig(idempotent)),
		grpc.WithChainUnaryInterceptor(c.unaryIdentity), grpc.WithChainStreamInterceptor(b.streamIdentity)}
}

func (b *Builder) Scheme() string { return b.opts.Scheme }

// Build starts resolving target: its Watcher's views become the
// ClientConn's endpoints, the latest one winning.
func (b *Builder) Build(target resolver.Target, cc resolver.ClientConn, _ resolver.BuildOptions) (resolver.Resolver, error) {
	key := strings.TrimPrefix(target.Endpoint(), "/")
	w, owned, err := b.watcher(key)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	log := cmp.Or(b.opts.Watcher.Logger, slog.Default())
	r := &res{cc: cc, w: w, owned: owned, scheme: b.opts.EndpointScheme, cancel: cancel,
		check: consumer.NewSchemeCheck(w.Status().Service, b.opts.EndpointScheme, log), next: make(chan registry.View, 1), done: make(chan struct{}),
		b: b, key: key, log: log, ejected: map[string]*ejection{}}
	b.mu.Lock()
	if b.resolvers[key] == nil {
		b.resolvers[key] = map[*res]struct{}{}
	}
	b.resolvers[key][r] = struct{}{}
	b.mu.Unlock()
	go r.run(ctx)
	r.stop = w.Subscribe(r.offer)
	return r, nil
}

func (b *Builder) watcher(service string) (w *consumer.Watcher, owned bool, err error) {
	if b.fixed != nil {
		return b.fixed, false, nil
	}
	if service == "" {
		return nil, false, fmt.Errorf("grpcresolver: target names no service; want %s:///<service>", b.opts.Scheme)
	}
	src, err := b.opts.Source(service)
	if err != nil {
		return nil, false, fmt.Errorf("grpcresolver: source of %q: %w", service, err)
	}
	wo := b.opts.Watcher
	wo.Source, wo.Service = src, service
	w, err = consumer.NewWatcher(wo)
	return w, true, err
}

// res is one target's resolver.
type res struct {
	cc     resolver.ClientConn
	w      *consumer.Watcher
	owned  bool
	scheme string // the endpoint dialled (Options.EndpointScheme)
	check  *consumer.SchemeCheck
	cancel context.CancelFunc
	stop   func()
	next   chan registry.View // latest-wins mailbox
	done   chan struct{}
	once   sync.Once
	b      *Builder
	key    string // the target's service path (Builder.resolvers)
	log    *slog.Logger

	mu      sync.Mutex // guards view, ejected, closed, and orders the UpdateState calls
	view    registry.View
	ejected map[string]*ejection // by address: answered as another service (identity.go)
	closed  bool
	addrs   int // addresses given to grpc-go last
}

// offer puts v in the mailbox, replacing a view not yet taken.
func (r *res) offer(v registry.View) {
	for {
		select {
		case r.next <- v:
			return
		default:
		}
		select {
		case <-r.next:
		default:
		}
	}
}

// run hands views to grpc-go outside the Watcher's lock.
func (r *res) run(ctx context.Context) {
	defer close(r.done)
	for {
		select {
		case <-ctx.Done():
			return
		case v := <-r.next:
			r.check.Dialled(v) // logs a view whose instances all lack the scheme (state leaves them out)
			r.mu.Lock()
			r.view = v
			r.pruneLocked()
			r.cc.UpdateState(r.stateLocked())
			r.mu.Unlock()
		}
	}
}

// state is v's instances as endpoints: each at its endpoint of scheme,
// those without one left out.
func state(v registry.View, scheme string) resolver.State {
	eps := make([]resolver.Endpoint, 0, len(v.Instances))
	for _, in := range v.Instances {
		if in, ok := in.ForScheme(scheme); ok {
			eps = append(eps, resolver.Endpoint{Addresses: []resolver.Address{{Addr: in.HostPort()}}})
		}
	}
	return resolver.State{Endpoints: eps}
}

// stateLocked is the view's state without the addresses ejected now.
func (r *res) stateLocked() resolver.State {
	st := state(r.view, r.scheme)
	if len(r.ejected) > 0 {
		now := time.Now()
		st.Endpoints = slices.DeleteFunc(st.Endpoints, func(ep resolver.Endpoint) bool {
			e := r.ejected[ep.Addresses[0].Addr]
			return e != nil && now.Before(e.until)
		})
	}
	r.addrs = len(st.Endpoints)
	return st
}

// ResolveNow does nothing: the Watcher pushes every change.
func (r *res) ResolveNow(resolver.ResolveNowOptions) {}

// Close stops the resolver (and its Watcher, unless shared).
func (r *res) Close() {
	r.once.Do(func() {
		r.stop()
		r.cancel()
		<-r.done
		r.b.mu.Lock()
		delete(r.b.resolvers[r.key], r)
		if len(r.b.resolvers[r.key]) == 0 {
			delete(r.b.resolvers, r.key)
		}
		r.b.mu.Unlock()
		r.mu.Lock()
		r.closed = true
		for _, e := range r.ejected {
			if e.timer != nil {
				e.timer.Stop()
			}
		}
		r.mu.Unlock()
		if r.owned {
			r.w.Close()
		}
	})
}
