package nacos

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/registry"
	"github.com/nacos-group/nacos-sdk-go/v2/model"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"
)

// SourceName is View.Source for views from Nacos.
const SourceName = "nacos"

// MetaWeight is the Instance.Meta key carrying the instance's Nacos weight
// (as strconv.FormatFloat's 'g' format), for a consumer that balances by it.
const MetaWeight = "nacos_weight"

// WatchOptions tune Watch and NewSource. Server must be set; the rest has
// defaults.
type WatchOptions struct {
	Server
	// Clusters limits the instances to these Nacos clusters; empty means
	// all.
	Clusters []string
	// ReadInterval is how often the full list is read even without a push
	// (default 2s): it covers lost and once-only subscription callbacks.
	ReadInterval time.Duration
	// CallTimeout bounds each read (default 2s).
	CallTimeout time.Duration
	// NoSubscribe turns off the subscription through nacos-sdk-go, which
	// only wakes the watch on a push; the watch then reads every
	// ReadInterval alone.
	NoSubscribe bool
	// MinBackoff and MaxBackoff bound the jittered backoff after failed
	// reads (default 250ms and 5s).
	MinBackoff, MaxBackoff time.Duration
	// SDKDir is the directory under which nacos-sdk-go's log and cache
	// files go (key registry.nacos.sdk_dir): one subdirectory per process,
	// the log rotated at 10 MB with 2 old files, the subscription's cache
	// removed once its client has closed (in the background, after Watch
	// returned), and a killed drainkit process's subdirectory removed by
	// the next process using the same directory. "" means DefaultSDKDir().
	SDKDir string
}

func (o WatchOptions) withDefaults() WatchOptions {
	o.Server = o.Server.withDefaults()
	if o.ReadInterval <= 0 {
		o.ReadInterval = 2 * time.Second
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = 2 * time.Second
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 250 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Second
	}
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	return o
}

// NewSource returns a registry.Source of service's instances in Nacos (see
// Watch).
func NewSource(service string, opts WatchOptions) registry.Source {
	return registry.SourceFunc(func(ctx context.Context, fn func(registry.View)) error {
		return Watch(ctx, service, opts, fn)
	})
}

// Watch follows the healthy, enabled instances of weight > 0 of service and
// calls fn with a registry.View stamped with the server's lastRefTime (the
// server's clock in milliseconds; a lower one than the last read's, from
// another server of a cluster or a restarted one, starts a new Epoch), the
// time received and Source "nacos":
//
//   - it reads the full list (GET /v1/ns/instance/list, healthyOnly) and
//     delivers it before anything else;
//   - it subscribes through nacos-sdk-go (unless NoSubscribe) and reads the
//     full list again on every push, ignoring the pushed content;
//   - it reads the full list every ReadInterval in any case;
//   - a failed read delivers the last good view with Err set (once per
//     failure streak) and retries after a jittered backoff; a failed
//     subscription leaves the periodic reads.
//
// Only changed views are delivered; an empty list is delivered as empty. fn
// runs in Watch's goroutine. Watch returns ctx.Err() as soon as ctx is
// done, even against a server that accepts and never answers (a read in
// progress is cancelled; the subscription's client, whose calls take no
// context, closes in the background), or an error at once for bad
// settings or an empty service name.
//
// Concurrent Watch calls are independent (each its own reads and
// subscription), so a consumer.Watcher may run its periodic full read
// (WatcherOptions.FullReadInterval) as a second Watch beside the first. A
// call whose ctx is done by the time its first read has been delivered
// returns then, without subscribing: a full read costs one HTTP GET.
func Watch(ctx context.Context, service string, opts WatchOptions, fn func(registry.View)) error {
	if service == "" {
		return errors.New("nacos: Watch: empty service name")
	}
	if err := opts.Server.Validate(); err != nil {
		return err
	}
	opts = opts.withDefaults()
	api := newOpenAPI(opts.Server)
	defer api.close()
	w := &watch{api: api, service: service, opts: opts, fn: fn, good: registry.View{Service: service, Source: SourceName}}
	w.bo = syncx.Backoff{Min: opts.MinBackoff, Max: opts.MaxBackoff}
	wake := make(chan struct{}, 1)
	w.read(ctx) // the full snapshot first, before any subscription
	if ctx.Err() != nil {
		// A caller that wanted one read (consumer.Watcher's full read
		// cancels at the first view) gets no subscription: that would be a
		// gRPC client of nacos-sdk-go made and closed for nothing.
		return ctx.Err()
	}
	if !opts.NoSubscribe {
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		go subscribe(sctx, w.service, opts, wake)
	}
	tick := time.NewTimer(opts.ReadInterval)
	defer tick.Stop()
	for {
		wait := opts.ReadInterval
		if w.inError {
			wait = w.bo.Next()
		}
		tick.Reset(wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
		case <-tick.C:
		}
		w.read(ctx)
	}
}

// watch is one Watch call's state.
type watch struct {
	api       *openAPI
	service   string
	opts      WatchOptions
	fn        func(registry.View)
	bo        syncx.Backoff
	good      registry.View
	delivered bool
	inError   bool
	epoch     uint64 // how often lastRefTime went backwards (registry.View.Epoch)
	lastRev   uint64 // the last successful read's lastRefTime
}

// subscribe runs the SDK subscription that wakes a watch on a push, until
// ctx ends: it makes the client, subscribes once the client has been
// connected for a read interval, then closes the client. It runs in a
// goroutine of its own, which Watch never waits for: nacos-sdk-go takes no
// context, and against a server that accepts and never answers making the
// client takes 9 s, its health check (an HTTP call when the gRPC
// connection is down) and Subscribe up to CallTimeout each, and closing it
// longer. A lost wake-up costs nothing: the periodic reads go on.
//
// Subscribing as soon as the client reports itself connected races inside
// nacos-sdk-go v2.3.5: the handler of the connection's "connected" event,
// which runs in a goroutine of its own some milliseconds later,
// re-subscribes every subscription it knows and processes the same cached
// service as Subscribe does, unsynchronised (go test -race reports it).
func subscribe(ctx context.Context, service string, opts WatchOptions, wake chan<- struct{}) {
	c, err := newSDKClient(opts.Server, opts.CallTimeout, opts.SDKDir)
	if err != nil {
		return // the periodic reads remain
	}
	defer c.close()
	settle := time.NewTimer(sdkSettle) // see sdkSettle
	select {
	case <-ctx.Done():
		settle.Stop()
		return
	case <-settle.C:
	}
	param := &vo.SubscribeParam{ServiceName: service, GroupName: opts.Group, Clusters: opts.Clusters,
		SubscribeCallback: func([]model.Instance, error) {
			select {
			case wake <- struct{}{}:
			default:
			}
		}}
	tick := time.NewTicker(opts.ReadInterval)
	defer tick.Stop()
	healthy := c.ServerHealthy() // connected at the previous tick
	for subscribed := false; !subscribed; {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		was := healthy
		healthy = c.ServerHealthy()
		subscribed = healthy && was && ctx.Err() == nil && c.Subscribe(param) == nil // on failure, again at the next tick
	}
	<-ctx.Done()
}

// read reads the list once and delivers the view if it changed, or the last
// good view with the error.
func (w *watch) read(ctx context.Context) {
	cctx, cancel := context.WithTimeout(ctx, w.opts.CallTimeout)
	l, err := w.api.consumerList(cctx, w.service, w.opts.Clusters)
	cancel()
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		w.fail(err)
		return
	}
	w.bo.Reset()
	rev := uint64(max(l.LastRefTime, 0))
	if rev < w.lastRev {
		// Another server of the cluster, or a restarted one, behind: a new
		// epoch, so that the consumer takes this view (DESIGN.md section 6c).
		w.epoch++
	}
	w.lastRev = rev
	list := []registry.Instance{}
	for _, h := range l.Hosts {
		if !h.Healthy || !h.Enabled || !(h.Weight > 0) {
			continue
		}
		if len(w.opts.Clusters) > 0 && !slices.Contains(w.opts.Clusters, h.ClusterName) {
			continue
		}
		meta := maps.Clone(h.Metadata)
		if meta == nil {
			meta = map[string]string{}
		}
		meta[MetaWeight] = strconv.FormatFloat(h.Weight, 'g', -1, 64)
		id := h.InstanceID
		if id == "" {
			id = InstanceID(h.IP, h.Port, h.ClusterName, w.opts.Group, w.service)
		}
		list = append(list, registry.Instance{ID: id, Address: h.IP, Port: h.Port, Meta: meta, Endpoints: hostEndpoints(h)})
	}
	slices.SortFunc(list, func(a, b registry.Instance) int { return cmp.Compare(a.ID, b.ID) })
	if w.delivered && !w.inError && slices.EqualFunc(list, w.good.Instances, sameInstance) {
		return
	}
	w.good = registry.View{Service: w.service, Instances: list, Revision: rev, Epoch: w.epoch,
		Received: time.Now(), Source: SourceName}
	w.delivered, w.inError = true, false
	w.fn(w.good)
}

// fail delivers the last good view with err, once per failure streak.
func (w *watch) fail(err error) {
	if w.inError {
		return
	}
	v := w.good
	v.Err, v.ErrAt = fmt.Errorf("nacos at %s: %w", strings.Join(w.opts.Addrs, ","), err), time.Now()
	w.inError = true
	w.fn(v)
}

func sameInstance(a, b registry.Instance) bool {
	return a.ID == b.ID && a.Address == b.Address && a.Port == b.Port && maps.Equal(a.Meta, b.Meta)
}

// hostEndpoints returns an instance's endpoints: each URL of MetaEndpoints
// that parses (an empty host meaning the instance's IP); else, for an
// instance registered the kratos way with only MetaKind, that scheme at
// the instance's IP and port; else none (one address for every protocol).
func hostEndpoints(h host) []registry.Endpoint {
	var eps []registry.Endpoint
	for _, u := range strings.Split(h.Metadata[MetaEndpoints], ",") {
		if e, err := registry.ParseEndpoint(strings.TrimSpace(u)); err == nil {
			e.Address = cmp.Or(e.Address, h.IP)
			eps = append(eps, e)
		}
	}
	if len(eps) == 0 && h.Metadata[MetaKind] != "" {
		eps = []registry.Endpoint{{Scheme: strings.ToLower(h.Metadata[MetaKind]), Address: h.IP, Port: h.Port}}
	}
	return eps
}
