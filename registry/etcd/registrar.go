package etcd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/drainkit/drainkit/internal/regworker"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	grpcbackoff "google.golang.org/grpc/backoff"
)

// ErrClosed is returned by Sync after Close.
var ErrClosed = errors.New("etcd: registrar closed")

// Registrar registers one instance in etcd under a lease and keeps the lease
// and the key in line with the lifecycle. It implements registry.Registrar
// (lifecycle.Registrar and lifecycle.DeregistrationConfirmer). Create it
// with New and add it with Lifecycle.AddRegistrar; call Close when the
// process no longer needs it (a stop hook), which ends the keep-alives and
// closes the client without revoking the lease.
//
// All etcd calls that change the instance run in one goroutine, owned by
// the Registrar: started by the first READY Sync, ended by Deregister or
// Close.
type Registrar struct {
	opts Options
	id   string
	key  string
	log  *slog.Logger

	core *regworker.Core // the wanted state, the status and the worker

	mu       sync.Mutex
	client   *clientv3.Client // created by the worker's first step; nil before
	lease    clientv3.LeaseID // the lease Lease reports, 0 if none
	noneHeld bool             // Deregister found no lease held: nothing to confirm

	// Owned by the worker goroutine; read by Deregister only after the worker
	// has returned.
	held       clientv3.LeaseID // the lease held, 0 if none
	keyWritten bool             // the key is written under lease, as far as we know
	written    time.Time        // readyAt of the value written
	counted    clientv3.LeaseID // the lease whose first write was counted as a registration
}

var _ registry.Registrar = (*Registrar)(nil)

// New validates opts and returns a Registrar. It makes no call to etcd: an
// unreachable etcd at start only delays the registration, which the worker
// retries on every keep-alive period. It returns a *budget.RangeError for
// an out-of-range option.
func New(opts Options) (*Registrar, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if opts.ID == "" {
		opts.ID = registry.InstanceID(opts.Service, opts.Port)
	}
	if opts.Address == "" {
		opts.Address = hostAddress()
	}
	if opts.Client.Logger == nil && opts.Client.LogConfig == nil {
		opts.Client.Logger = zap.NewNop()
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	log := logger.With("registrar", "etcd", "service", opts.Service, "id", opts.ID,
		"endpoints", strings.Join(opts.Client.Endpoints, ",")) // "context deadline exceeded" alone does not say where

	return &Registrar{
		opts: opts,
		id:   opts.ID,
		key:  Key(opts.Prefix, opts.Service, opts.ID),
		log:  log,
		core: regworker.NewCore(registry.Status{ID: opts.ID, Service: opts.Service, Health: registry.Absent},
			regworker.Streak{Log: log, Failing: "etcd: call failed; retrying every keep-alive period",
				Again: "etcd: call failed", Recovered: "etcd: calls succeed again"}, ErrClosed),
	}, nil
}

// hostAddress returns the first non-loopback unicast IP of this host's
// interfaces (IPv4 preferred), else the hostname, else "127.0.0.1".
func hostAddress() string {
	addrs, _ := net.InterfaceAddrs()
	var v6 string
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.IsLoopback() || !ipn.IP.IsGlobalUnicast() {
			continue
		}
		if ipn.IP.To4() != nil {
			return ipn.IP.String()
		}
		if v6 == "" {
			v6 = ipn.IP.String()
		}
	}
	if v6 != "" {
		return v6
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "127.0.0.1"
}

// ID returns the instance ID, the key's last segment.
func (r *Registrar) ID() string { return r.id }

// Key returns the instance's key: Prefix/Service/ID.
func (r *Registrar) Key() string { return r.key }

// Options returns the options in force, with defaults applied.
func (r *Registrar) Options() Options { return r.opts }

// Lease returns the lease the instance's key is attached to, 0 if none. It
// never blocks on etcd.
func (r *Registrar) Lease() clientv3.LeaseID {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lease
}

// Status returns what the Registrar last wrote to etcd. It never blocks on
// etcd.
func (r *Registrar) Status() registry.Status { return r.core.Status() }

// StatusDetail returns Status for GET /state (lifecycle.StatusDetailer).
func (r *Registrar) StatusDetail() any { return r.Status() }

// Sync brings etcd in line with t: the first READY grants the lease and
// writes the key under it; EJECTED deletes the key while the lease is kept
// alive; READY again writes it again. EJECTED before the first READY changes
// nothing, since nothing is registered yet.
//
// It returns once the worker applied t (or a later transition) with that
// outcome, or ctx's error if ctx ends first; the worker keeps retrying on
// each keep-alive period either way. It returns ErrClosed after Close,
// registry.ErrDeregistered after Deregister, and an error for states other
// than READY and EJECTED.
func (r *Registrar) Sync(ctx context.Context, t lifecycle.Transition) error {
	return r.core.Sync(ctx, t, r.opts.KeepAliveInterval, r.step)
}

// Close stops the worker and waits for it, then closes the etcd client. It
// does not revoke the lease: the key stays until the lease expires, TTL after
// the last keep-alive. Close is idempotent and returns the client's Close
// error, if any.
func (r *Registrar) Close() error {
	r.core.Close(context.Background())
	r.mu.Lock()
	c := r.client
	r.client = nil
	r.mu.Unlock()
	if c != nil {
		return c.Close()
	}
	return nil
}

// etcdClient returns the client, creating it on first use. clientv3.New does
// not wait for a connection; it blocks only to fetch an auth token when
// Username is set, bounded by Client.DialTimeout (CallTimeout if 0).
func (r *Registrar) etcdClient() (*clientv3.Client, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client != nil {
		return r.client, nil
	}
	if r.core.Closed() {
		return nil, ErrClosed
	}
	cfg := r.opts.Client
	if cfg.Context == nil {
		cfg.Context = context.Background()
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = r.opts.CallTimeout
	}
	// Reconnect at least once per keep-alive period (gRPC's default backoff
	// grows to 2 minutes), so an etcd that comes back is reached by the next
	// keep-alive; options the caller set come later and win.
	reconnect := grpc.WithConnectParams(grpc.ConnectParams{MinConnectTimeout: r.opts.CallTimeout,
		Backoff: grpcbackoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: r.opts.KeepAliveInterval}})
	cfg.DialOptions = append([]grpc.DialOption{reconnect}, cfg.DialOptions...)
	c, err := clientv3.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcd: client: %w", err)
	}
	r.client = c
	return c, nil
}

// callCtx bounds one etcd call by CallTimeout.
func (r *Registrar) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.opts.CallTimeout)
}
