package etcd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/registry"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// SourceName is View.Source for views from etcd.
const SourceName = "etcd"

// WatchOptions tune Watch and NewSource. The zero value is ready to use.
type WatchOptions struct {
	// Prefix is the key prefix (kratos's namespace); "" means
	// DefaultPrefix. Instances are read from Prefix/<service>/.
	Prefix string
	// Scheme, if set, selects the endpoint a View's Address and Port come
	// from, and instances without such an endpoint are left out. "" (the
	// default) delivers every instance with an endpoint, at its first
	// (primary) one: drainkit's consumers pick their own endpoint by scheme
	// (consumer.Options.Scheme, default "http"; grpcresolver's
	// EndpointScheme, default "grpc"), so one Source serves both, and a
	// consumer whose scheme no instance offers says so (logged, and in its
	// Status) instead of seeing an empty list. Set it only for a consumer
	// of your own that dials Address and Port.
	Scheme string
	// MinBackoff and MaxBackoff bound the jittered exponential backoff after
	// failed reads: the first wait is about MinBackoff, doubling up to
	// MaxBackoff, and it resets after a success. 0 means 250ms and 10s.
	MinBackoff, MaxBackoff time.Duration
	// CheckInterval is how often a quiet watch checks that etcd still
	// answers (a count-only read, bounded by CheckInterval): a watch on a
	// stopped etcd would otherwise wait silently. 0 means 5s.
	CheckInterval time.Duration
}

func (o WatchOptions) withDefaults() WatchOptions {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 250 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 10 * time.Second
	}
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	if o.CheckInterval <= 0 {
		o.CheckInterval = 5 * time.Second
	}
	return o
}

// NewSource returns a registry.Source of service's instances in etcd (see
// Watch for the rules).
func NewSource(client *clientv3.Client, service string, opts WatchOptions) registry.Source {
	return registry.SourceFunc(func(ctx context.Context, fn func(registry.View)) error {
		return Watch(ctx, client, service, opts, fn)
	})
}

// Watch follows the instances of service under Prefix/<service>/ and calls
// fn with a registry.View stamped with etcd's store revision, the time it was
// received and Source "etcd":
//
//   - it reads every key with one Get at a revision R and delivers that view
//     (fn runs before the watch starts), then watches from R+1 and applies
//     each batch of events, delivering the view when the instance list
//     changed;
//   - a watch whose start revision was compacted (ErrCompacted) is never
//     resumed with a gap: Watch reads everything again with a fresh Get and
//     delivers the result if it differs, so a deletion is never missed;
//   - a failed read, or a watch that ends with an error, delivers the last
//     good view with Err set (once per failure streak) and retries after a
//     jittered backoff; a quiet watch checks every CheckInterval that etcd
//     still answers;
//   - a store revision lower than one already seen (after a restore from a
//     snapshot without --bump-revision, or a new cluster at the same
//     endpoints; compaction never lowers it) starts a new
//     registry.View.Epoch, so that a consumer takes the views with the lower
//     revisions. Epoch starts at 0 and counts within one Watch call. etcd's
//     client resumes a broken watch at the next revision on its own, which
//     on such a cluster would wait silently; the check every CheckInterval
//     compares the store revision and, when it went backwards, reads
//     everything again.
//
// Values are kratos's instance JSON (see ParseValue); a value that does not
// parse or names another service is left out, and so is one without an
// endpoint of Scheme when Scheme is set.
// fn runs in Watch's goroutine. Watch returns ctx.Err() when ctx is done, or
// an error at once if client is nil or service is empty.
func Watch(ctx context.Context, client *clientv3.Client, service string, opts WatchOptions, fn func(registry.View)) error {
	if client == nil {
		return errors.New("etcd: Watch: nil client")
	}
	if service == "" {
		return errors.New("etcd: Watch: empty service name")
	}
	w := &watch{client: client, service: service, opts: opts.withDefaults(), fn: fn,
		good: registry.View{Service: service, Source: SourceName}}
	w.bo = syncx.Backoff{Min: w.opts.MinBackoff, Max: w.opts.MaxBackoff}
	for {
		err := w.round(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			w.fail(err)
			if serr := syncx.Sleep(ctx, w.bo.Next()); serr != nil {
				return serr
			}
		}
	}
}

// watch is one Watch call's state.
type watch struct {
	client    *clientv3.Client
	service   string
	opts      WatchOptions
	fn        func(registry.View)
	bo        syncx.Backoff
	instances map[string]registry.Instance // by key, as of good.Revision
	good      registry.View                // the last view delivered without error
	delivered bool
	inError   bool         // the last delivered view had Err set
	lastRev   atomic.Int64 // the store revision last read or watched; the check reads it too
	epoch     uint64       // how often the store revision went backwards (registry.View.Epoch)
}

// errRevisionBack ends a watch whose check read a store revision lower than
// one already seen: etcd's client resumes a broken watch at the next
// revision by itself, so on a cluster restored from an older snapshot the
// watch would wait, silent, until the revision climbed past the old one.
var errRevisionBack = errors.New("etcd: the store revision went backwards")

// round reads everything, then follows the watch until it fails or needs a
// fresh read (compaction). It returns nil for a compaction, else the error.
func (w *watch) round(ctx context.Context) error {
	dir := ServicePrefix(w.opts.Prefix, w.service)
	gctx, cancel := context.WithTimeout(ctx, w.opts.CheckInterval)
	resp, err := w.client.Get(gctx, dir, clientv3.WithPrefix())
	cancel()
	if err != nil {
		return err
	}
	w.bo.Reset()
	w.instances = map[string]registry.Instance{}
	for _, kv := range resp.Kvs {
		w.put(string(kv.Key), kv.Value)
	}
	rev := resp.Header.Revision
	w.deliver(rev)

	// The check runs beside the watch: creating a watch on a stopped etcd
	// blocks, and a quiet one would wait silently.
	wctx, wcancel := context.WithCancelCause(clientv3.WithRequireLeader(ctx))
	defer wcancel(nil)
	stop := w.checkEvery(wctx, wcancel, dir)
	defer stop()
	for wr := range w.client.Watch(wctx, dir, clientv3.WithPrefix(), clientv3.WithRev(rev+1)) {
		if wr.CompactRevision != 0 || errors.Is(wr.Err(), rpctypes.ErrCompacted) {
			return nil // read everything again: no gap
		}
		if err := wr.Err(); err != nil {
			if errors.Is(context.Cause(wctx), errRevisionBack) {
				return nil // read everything again, in a new epoch
			}
			return err
		}
		w.apply(wr)
	}
	if err := context.Cause(wctx); errors.Is(err, errRevisionBack) {
		return nil // read everything again, in a new epoch
	} else if err != nil && ctx.Err() == nil {
		return err
	}
	return errors.New("etcd: watch closed")
}

// checkEvery starts a goroutine that reads the count of keys under dir every
// CheckInterval, each read bounded by CheckInterval, and cancels the watch
// with the error of the first failed read, or with errRevisionBack when a
// read's store revision is lower than one already seen. stop ends it and
// waits.
func (w *watch) checkEvery(ctx context.Context, cancel context.CancelCauseFunc, dir string) (stop func()) {
	done := make(chan struct{})
	quit := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(w.opts.CheckInterval)
		defer tick.Stop()
		for {
			select {
			case <-quit:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			cctx, ccancel := context.WithTimeout(ctx, w.opts.CheckInterval)
			resp, err := w.client.Get(cctx, dir, clientv3.WithPrefix(), clientv3.WithCountOnly())
			ccancel()
			if err != nil && ctx.Err() == nil {
				cancel(err)
				return
			}
			if err == nil && resp.Header.Revision < w.lastRev.Load() {
				cancel(errRevisionBack)
				return
			}
		}
	}()
	return func() { close(quit); <-done }
}

// apply applies one batch of events and delivers the view if it changed.
func (w *watch) apply(wr clientv3.WatchResponse) {
	for _, ev := range wr.Events {
		switch ev.Type {
		case clientv3.EventTypePut:
			w.put(string(ev.Kv.Key), ev.Kv.Value)
		case clientv3.EventTypeDelete:
			delete(w.instances, string(ev.Kv.Key))
		}
	}
	if len(wr.Events) > 0 {
		w.deliver(wr.Header.Revision)
	}
}

func (w *watch) put(key string, value []byte) {
	in, err := ParseValue(value, w.service, w.opts.Scheme)
	if err != nil {
		delete(w.instances, key)
		return
	}
	w.instances[key] = in
}

// deliver calls fn with the current instances at rev, if they differ from
// the last view delivered, or an error view was delivered since, or nothing
// was delivered yet.
func (w *watch) deliver(rev int64) {
	// A store revision lower than one already read (a cluster restored from
	// an older snapshot without --bump-revision, or a new cluster at the
	// same endpoints) starts a new epoch, counted even when the list is
	// unchanged: every later view carries it.
	if rev < w.lastRev.Load() {
		w.epoch++
	}
	w.lastRev.Store(rev)
	list := slices.SortedFunc(maps.Values(w.instances), func(a, b registry.Instance) int { return cmp.Compare(a.ID, b.ID) })
	if list == nil {
		list = []registry.Instance{}
	}
	if w.delivered && !w.inError && slices.EqualFunc(list, w.good.Instances, registry.Instance.Equal) {
		return
	}
	w.good = registry.View{Service: w.service, Instances: list, Revision: uint64(rev), Epoch: w.epoch, Received: time.Now(), Source: SourceName}
	w.delivered, w.inError = true, false
	w.fn(w.good)
}

// fail delivers the last good view with err, once per failure streak.
func (w *watch) fail(err error) {
	if w.inError {
		return
	}
	v := w.good
	// etcd's client errors ("context deadline exceeded") do not say where.
	v.Err, v.ErrAt = fmt.Errorf("etcd at %s: %w", strings.Join(w.client.Endpoints(), ","), err), time.Now()
	w.inError = true
	w.fn(v)
}
