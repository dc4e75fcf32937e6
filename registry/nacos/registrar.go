package nacos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drainkit/drainkit/internal/regworker"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
)

// ErrClosed is returned by Sync after Close.
var ErrClosed = errors.New("nacos: registrar closed")

// Registrar registers one ephemeral instance in Nacos through nacos-sdk-go's
// gRPC client and keeps it in line with the lifecycle (see the package
// documentation). It implements registry.Registrar. Create it with New, add
// it with Lifecycle.AddRegistrar, and Close it last (a stop hook).
type Registrar struct {
	opts Options
	log  *slog.Logger
	api  *openAPI

	core *regworker.Core // the wanted state, the status and the worker

	mu      sync.Mutex
	dial    *dial // the SDK's client, started by the worker's first step
	offline bool  // an operator disabled the instance on the server
	// registered is set before the first registration call: from then on
	// the server may hold the instance. A call that failed or timed out may
	// still have been applied, and nacos-sdk-go keeps every registration it
	// was given, sent or not, to send it again whenever its connection comes
	// up (its redo); only a DeregisterInstance call drops it from there,
	// whatever that call's outcome. Deregister and Confirm read it even
	// when the worker did not stop in time.
	registered atomic.Bool

	// Owned by the worker goroutine (and by Deregister once it stopped).
	pub         publication // what the last successful RegisterInstance said
	pubAt       time.Time   // when; zero before the first
	adminDenied bool        // the admin API denied the last read-back (logged once)
}

// publication is what a registration tells the server.
type publication struct {
	healthy, enabled bool
	readyAt          time.Time
}

var _ registry.Registrar = (*Registrar)(nil)

// New validates opts and returns a Registrar. It makes no call to Nacos: an
// unreachable server at start only delays the registration. The error is a
// *budget.RangeError naming the bad setting.
func New(opts Options) (*Registrar, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if opts.Address == "" {
		opts.Address = hostIP()
	}
	if opts.SDKDir == "" {
		opts.SDKDir = DefaultSDKDir()
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	id := InstanceID(opts.Address, opts.Port, opts.Cluster, opts.Group, opts.Service)
	log := logger.With("registrar", "nacos", "service", opts.Service, "group", opts.Group, "namespace", opts.Namespace,
		"instance", id, "servers", strings.Join(opts.Addrs, ","))
	return &Registrar{
		opts: opts,
		log:  log,
		api:  newOpenAPI(opts.Server),
		core: regworker.NewCore(registry.Status{ID: id, Service: opts.Service, Health: registry.Absent},
			regworker.Streak{Log: log, Failing: "nacos: call failed; retrying every sync interval",
				Again: "nacos: call failed", Recovered: "nacos: calls succeed again"}, ErrClosed),
	}, nil
}

// InstanceID is Nacos's own ID of an instance ("simple" generator):
// "ip#port#cluster#group@@service".
func InstanceID(ip string, port int, cluster, group, service string) string {
	return ip + "#" + strconv.Itoa(port) + "#" + cluster + "#" + group + "@@" + service
}

// hostIP returns the first non-loopback unicast IP of this host's
// interfaces (IPv4 preferred), else 127.0.0.1: Nacos needs an IP.
func hostIP() string {
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
	return "127.0.0.1"
}

// Options returns the options in force, with defaults applied.
func (r *Registrar) Options() Options { return r.opts }

// Status returns what the Registrar last wrote to Nacos; Health is
// Maintenance while an operator keeps the instance offline. It never blocks
// on Nacos.
func (r *Registrar) Status() registry.Status { return r.core.Status() }

// StatusDetail returns Status for GET /state (lifecycle.StatusDetailer).
func (r *Registrar) StatusDetail() any { return r.Status() }

// OperatorOffline reports whether the Registrar last saw the instance
// disabled by an operator on the server.
func (r *Registrar) OperatorOffline() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.offline
}

// Sync brings Nacos in line with t: the first READY registers the instance
// (healthy, with its READY time); EJECTED re-registers it unhealthy, which
// takes it out of consumers' healthy lists while keeping the registration;
// READY again makes it healthy with the new READY time. EJECTED before the
// first READY changes nothing. It returns once the worker applied t (or a
// later transition), or ctx's error; the worker retries every SyncInterval
// either way. It returns ErrClosed after Close, registry.ErrDeregistered
// after Deregister, and an error for states other than READY and EJECTED.
func (r *Registrar) Sync(ctx context.Context, t lifecycle.Transition) error {
	return r.core.Sync(ctx, t, r.opts.SyncInterval, r.step)
}

// sdkClient returns nacos-sdk-go's naming client, starting to make it on
// first use (and again after a failed try), or an error when ctx ends
// first: the SDK's connection attempts, which take no context, go on in a
// goroutine of their own and r.mu is never held across them.
func (r *Registrar) sdkClient(ctx context.Context) (*sdkClient, error) {
	r.mu.Lock()
	if r.core.Closed() {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	if r.dial == nil || r.dial.failed() {
		r.dial = dialSDK(r.opts.Server, r.opts.CallTimeout, r.opts.SDKDir)
	}
	d := r.dial
	r.mu.Unlock()
	return d.get(ctx)
}

// madeClient returns the client if it has been made, else nil, without
// waiting: Deregister and Confirm read it. Nothing can have been registered
// through a client still being made.
func (r *Registrar) madeClient() *sdkClient {
	r.mu.Lock()
	d := r.dial
	r.mu.Unlock()
	if d == nil {
		return nil
	}
	return d.ready()
}

// Close stops the worker and closes nacos-sdk-go's client, the two
// together bounded by CloseTimeout: closing the connection removes the
// client's ephemeral instances on the server, and against a server that
// accepts and never answers the SDK's calls take no context (making the
// client takes 9 s, closing it can hang longer). What did not finish in
// time goes on in the background and Close reports it. It does not
// deregister otherwise. Close is idempotent.
func (r *Registrar) Close() error {
	ctx, cancel := context.WithTimeoutCause(context.Background(), r.opts.CloseTimeout,
		fmt.Errorf("registry.nacos.close_timeout %s", r.opts.CloseTimeout))
	defer cancel()
	defer r.api.close()
	var errs []error
	if !r.core.Close(ctx) {
		// Cancelled, it ends at its next check of its context.
		errs = append(errs, fmt.Errorf("nacos: the registrar's worker did not stop in time (%w)", context.Cause(ctx)))
	}
	r.mu.Lock()
	d := r.dial
	r.dial = nil
	r.mu.Unlock()
	if d != nil {
		errs = append(errs, d.close(ctx))
	}
	return errors.Join(errs...)
}

// callCtx bounds one call by CallTimeout.
func (r *Registrar) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.opts.CallTimeout)
}

// bounded runs call (an SDK call, which takes no context) and returns its
// error, or ctx's error if ctx ends first; the call then finishes in the
// background.
func bounded(ctx context.Context, call func() error) error {
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// metadata is the instance's metadata: Meta with the READY time.
func (r *Registrar) metadata(readyAt time.Time) map[string]string {
	m := maps.Clone(r.opts.Meta)
	if m == nil {
		m = map[string]string{}
	}
	m[registry.MetaReadyAt] = readyAt.UTC().Format(time.RFC3339Nano)
	if r.opts.Scheme != "" {
		m[MetaKind], m[MetaEndpoints] = r.opts.Scheme, r.opts.endpointsMeta()
	}
	return m
}
