package drill

import (
	"context"
	"sync"
	"time"

	"github.com/drainkit/drainkit/registry"
)

// CachedSource puts a time-to-live cache in front of a Source, as Spring
// Cloud LoadBalancer's CachingServiceInstanceListSupplier does (35 s by
// default): the consumer keeps using the instance list it fetched until the
// list is TTL old, then fetches again on its next request. So a consumer sees
// a discovery result up to TTL old, on top of discovery's own delay.
type CachedSource struct {
	src Source
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	view    []Endpoint
	fetched time.Time
}

// NewCachedSource returns a cache over src. phase in [0, 1) staggers the
// consumers' caches: the first fetch is treated as made phase*ttl ago, so
// consumers do not all refresh at the same moment.
func NewCachedSource(src Source, ttl time.Duration, phase float64) *CachedSource {
	c := &CachedSource{src: src, ttl: ttl, now: time.Now}
	c.view = src.Endpoints()
	c.fetched = c.now().Add(-time.Duration(phase * float64(ttl)))
	return c
}

// Endpoints implements Source: the cached list, refreshed when TTL old.
func (c *CachedSource) Endpoints() []Endpoint {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := c.now(); now.Sub(c.fetched) >= c.ttl {
		c.view = c.src.Endpoints()
		c.fetched = now
	}
	return c.view
}

// Peek implements Peeker: the list the consumer's next request will use,
// without refreshing the cache, so that looking does not move the
// consumer's next refresh.
func (c *CachedSource) Peek() []Endpoint {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.now().Sub(c.fetched) >= c.ttl {
		return c.src.Endpoints()
	}
	return c.view
}

// cachedViews puts the same time-to-live cache in front of a registry
// source as CachedSource does in front of a list: the consumer gets the
// source's view when it starts and then the source's latest view once every
// ttl (if it changed), never in between. phase staggers the consumers as in
// NewCachedSource.
func cachedViews(src registry.Source, ttl time.Duration, phase float64) registry.Source {
	return registry.SourceFunc(func(ctx context.Context, fn func(registry.View)) error {
		latest := make(chan registry.View, 1)
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = src.Watch(wctx, func(v registry.View) {
				select { // latest wins: drop the undelivered one
				case <-latest:
				default:
				}
				latest <- v
			})
		}()
		defer func() { cancel(); <-done }()
		return deliverCached(ctx, latest, ttl, phase, fn)
	})
}

// deliverCached passes the first view from latest to fn at once, then the
// newest one every ttl, the first refresh (1-phase)*ttl after the start.
func deliverCached(ctx context.Context, latest <-chan registry.View, ttl time.Duration, phase float64, fn func(registry.View)) error {
	var last registry.View
	select {
	case last = <-latest:
		fn(last)
	case <-ctx.Done():
		return ctx.Err()
	}
	t := time.NewTimer(time.Duration((1 - phase) * float64(ttl)))
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
		select {
		case v := <-latest:
			if !sameView(v, last) {
				fn(v)
				last = v
			}
		default:
		}
		t.Reset(ttl)
	}
}
