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
	"github.com/nacos-group/nacos-sdk-go/v2/clients"
	"github.com/nacos-group/nacos-sdk-go/v2/clients/naming_client"
	"github.com/nacos-group/nacos-sdk-go/v2/common/constant"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"
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
	client  *sdkClient // created by the worker's first step
	offline bool       // an operator disabled the instance on the server
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

// sdkClient returns nacos-sdk-go's naming client, creating it on first use,
// with its local caches off: drainkit reads the server itself.
func (r *Registrar) sdkClient() (*sdkClient, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.client != nil {
		return r.client, nil
	}
	if r.core.Closed() {
		return nil, ErrClosed
	}
	c, err := newSDKClient(r.opts.Server, r.opts.CallTimeout, r.opts.SDKDir)
	if err != nil {
		return nil, err
	}
	r.client = c
	return c, nil
}

// sdkClientsMade counts the nacos-sdk-go clients made (each a gRPC
// connection and goroutines, some of which outlive CloseClient), for the
// tests: a full read must not make one.
var sdkClientsMade atomic.Int64

// sdkClient is a nacos-sdk-go naming client with its cache directory.
type sdkClient struct {
	naming_client.INamingClient
	removeCache func()
}

// newSDKClient creates a naming client for s, its files under sdkDir (see
// processDir), its local caches never read.
func newSDKClient(s Server, timeout time.Duration, sdkDir string) (*sdkClient, error) {
	logDir, cacheDir, removeCache, err := sdkDirs.clientDirs(sdkDir)
	if err != nil {
		return nil, err
	}
	sdkClientsMade.Add(1)
	cc := constant.ClientConfig{
		NamespaceId:          s.Namespace,
		TimeoutMs:            uint64(timeout.Milliseconds()),
		NotLoadCacheAtStart:  true,  // a cache left by an earlier process is stale evidence
		UpdateCacheWhenEmpty: false, // (the SDK's default) never used for decisions here
		LogLevel:             "warn",
		Username:             s.Username,
		Password:             s.Password,
	}
	sdkFiles(&cc, logDir, cacheDir)
	var sc []constant.ServerConfig
	for _, a := range s.Addrs {
		host, port, _ := net.SplitHostPort(a) // checked by Validate
		p, _ := strconv.Atoi(port)
		sc = append(sc, constant.ServerConfig{IpAddr: host, Port: uint64(p), GrpcPort: uint64(p + 1000),
			ContextPath: s.ContextPath, Scheme: "http"})
	}
	c, err := clients.NewNamingClient(vo.NacosClientParam{ClientConfig: &cc, ServerConfigs: sc})
	if err != nil {
		removeCache()
		return nil, fmt.Errorf("nacos: client: %w", err)
	}
	return &sdkClient{INamingClient: c, removeCache: removeCache}, nil
}

// Close closes nacos-sdk-go's client, bounded by CloseTimeout: closing the
// connection removes the client's ephemeral instances on the server, and
// can hang when the server is unreachable (the close then goes on in the
// background and Close reports it). It does not deregister otherwise. Close
// is idempotent.
func (r *Registrar) Close() error {
	r.core.Close()
	r.mu.Lock()
	c := r.client
	r.client = nil
	r.mu.Unlock()
	defer r.api.close()
	if c == nil {
		return nil
	}
	return c.closeWithin(r.opts.CloseTimeout)
}

// closeWithin closes the client, waiting at most timeout; its cache
// directory is removed once the close returned.
func (c *sdkClient) closeWithin(timeout time.Duration) error {
	done := make(chan struct{})
	go func() { c.CloseClient(); c.removeCache(); close(done) }()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
		return fmt.Errorf("nacos: closing the client took longer than %s; it goes on in the background", timeout)
	}
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
