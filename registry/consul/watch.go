package consul

import (
	"cmp"
	"context"
	"errors"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/consul/api"
)

// Instance is one passing instance of a service, as the health endpoint
// lists it.
type Instance struct {
	ID   string `json:"id"`
	Node string `json:"node"`
	// Address is the service's address, or its node's address when the
	// service registered none.
	Address string            `json:"address"`
	Port    int               `json:"port"`
	Tags    []string          `json:"tags,omitempty"`
	Meta    map[string]string `json:"meta,omitempty"`
}

// HostPort returns Address and Port joined for net.Dial.
func (i Instance) HostPort() string { return net.JoinHostPort(i.Address, strconv.Itoa(i.Port)) }

// View is what a watch knows about a service's passing instances.
//
// After a failed query, Err is set and the rest is the last good view (an
// error is not an empty list): Instances, Index and Received are those of the
// last successful answer, and ErrAt is when the query failed. Before any
// successful answer, Index is 0 and Received is zero.
type View struct {
	Service string `json:"service"`
	// Instances are the passing instances, sorted by ID; empty (not nil
	// after a successful answer) when none passes.
	Instances []Instance `json:"instances"`
	// Index is the X-Consul-Index of the answer.
	Index uint64 `json:"index"`
	// Received is when the answer arrived.
	Received time.Time `json:"received"`
	// Err is the last query's error, nil if it succeeded; ErrAt its time.
	Err   error     `json:"-"`
	ErrAt time.Time `json:"err_at,omitzero"`
}

// Has reports whether the instance with id is in the view.
func (v View) Has(id string) bool {
	for _, in := range v.Instances {
		if in.ID == id {
			return true
		}
	}
	return false
}

// WatchOptions tune Watch and NewWatcher. The zero value is ready to use.
type WatchOptions struct {
	// WaitTime is the longest one blocking query waits for a change. 0 means
	// 1m; Consul caps it at 10m.
	WaitTime time.Duration
	// MinBackoff and MaxBackoff bound the jittered exponential backoff after
	// failed queries: the first wait is about MinBackoff, doubling up to
	// MaxBackoff, and it resets after a success. 0 means 250ms and 10s.
	MinBackoff, MaxBackoff time.Duration
	// Tag restricts the watch to instances with this tag; "" means all.
	Tag string
	// Query holds further query options (Datacenter, Token, AllowStale,
	// Filter, ...). nil means none; WaitIndex and WaitTime are always set by
	// the watch.
	Query *api.QueryOptions
}

func (o WatchOptions) withDefaults() WatchOptions {
	if o.WaitTime <= 0 {
		o.WaitTime = time.Minute
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 250 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 10 * time.Second
	}
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	return o
}

// Watch follows the passing instances of service with blocking queries on
// /v1/health/service/<service>?passing and calls fn with a View:
//
//   - after the first answer, and after every answer whose X-Consul-Index
//     differs from the last one delivered (a query that timed out without a
//     change delivers nothing);
//   - after every failed query, with Err set and the last good instances
//     kept; the next query waits a jittered, exponentially growing backoff.
//
// Index rules (Consul's blocking-query guidance): an index lower than the
// last one (a new leader, an agent that lost its state) resets the wait index
// to 0; an index of 0 is replaced by 1; queries that answer at once are
// spaced at least 100ms apart, so the loop never spins.
//
// fn runs in Watch's goroutine; the next query starts when it returns. Watch
// returns ctx.Err() when ctx is done, without calling fn for that, or an
// error at once if service is empty or client is nil.
func Watch(ctx context.Context, client *api.Client, service string, opts WatchOptions, fn func(View)) error {
	if client == nil {
		return errors.New("consul: Watch: nil client")
	}
	if service == "" {
		return errors.New("consul: Watch: empty service name")
	}
	opts = opts.withDefaults()
	bo := backoff{min: opts.MinBackoff, max: opts.MaxBackoff}
	var (
		idx       uint64
		good      = View{Service: service}
		delivered bool // a successful view was delivered
		inError   bool // the last delivered view had Err set
	)
	for {
		q := &api.QueryOptions{}
		if opts.Query != nil {
			*q = *opts.Query
		}
		q.WaitIndex, q.WaitTime = idx, opts.WaitTime
		start := time.Now()
		entries, meta, err := client.Health().Service(service, opts.Tag, true, q.WithContext(ctx))
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			v := good
			v.Err, v.ErrAt = err, time.Now()
			fn(v)
			inError = true
			if err := sleep(ctx, bo.next()); err != nil {
				return err
			}
			continue
		}
		bo.reset()
		next, reset := nextIndex(idx, meta.LastIndex)
		if !delivered || inError || reset || meta.LastIndex != good.Index {
			good = View{Service: service, Instances: instances(entries), Index: meta.LastIndex, Received: time.Now()}
			delivered, inError = true, false
			fn(good)
		}
		idx = next
		if reset || time.Since(start) < minQueryInterval {
			if err := sleep(ctx, minQueryInterval-time.Since(start)); err != nil {
				return err
			}
		}
	}
}

func instances(entries []*api.ServiceEntry) []Instance {
	out := make([]Instance, 0, len(entries))
	for _, e := range entries {
		if e.Service == nil {
			continue
		}
		in := Instance{ID: e.Service.ID, Address: e.Service.Address, Port: e.Service.Port,
			Tags: e.Service.Tags, Meta: e.Service.Meta}
		if e.Node != nil {
			in.Node = e.Node.Node
			if in.Address == "" {
				in.Address = e.Node.Address
			}
		}
		out = append(out, in)
	}
	slices.SortFunc(out, func(a, b Instance) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Watcher runs Watch in its own goroutine and keeps the latest View. C
// receives views, latest wins: it holds at most one, and a newer view
// replaces an unread one, so a slow reader never stalls the watch. C is
// closed after Close.
type Watcher struct {
	C <-chan View

	c       chan View
	cancel  context.CancelFunc
	done    chan struct{}
	mu      sync.Mutex
	latest  View
	has     bool
	changed chan struct{} // closed and replaced on every view
}

// NewWatcher starts watching service (see Watch for the rules). Call Close to
// stop it. It panics if client is nil or service is empty, which are
// programming errors.
func NewWatcher(client *api.Client, service string, opts WatchOptions) *Watcher {
	if client == nil || service == "" {
		panic("consul: NewWatcher needs a client and a service name")
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := make(chan View, 1)
	w := &Watcher{C: c, c: c, cancel: cancel, done: make(chan struct{}), changed: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer close(c)
		_ = Watch(ctx, client, service, opts, w.offer)
	}()
	return w
}

func (w *Watcher) offer(v View) {
	w.mu.Lock()
	w.latest, w.has = v, true
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
	select {
	case <-w.c:
	default:
	}
	w.c <- v // only this goroutine sends, and the buffer was just emptied
}

// Latest returns the most recent view and whether there is one yet.
func (w *Watcher) Latest() (View, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.latest, w.has
}

// WaitFor blocks until the latest view satisfies cond and returns it, or
// returns the latest view and an error when ctx ends or the watcher is
// closed first. It looks at the latest view after each delivery, so a view
// replaced before WaitFor saw it is skipped. cond must not block.
func (w *Watcher) WaitFor(ctx context.Context, cond func(View) bool) (View, error) {
	for {
		w.mu.Lock()
		v, has, ch := w.latest, w.has, w.changed
		w.mu.Unlock()
		if has && cond(v) {
			return v, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return v, ctx.Err()
		case <-w.done:
			return v, errors.New("consul: watcher closed")
		}
	}
}

// Close stops the watch, waits for its goroutine and closes C. It is
// idempotent.
func (w *Watcher) Close() {
	w.cancel()
	<-w.done
}
