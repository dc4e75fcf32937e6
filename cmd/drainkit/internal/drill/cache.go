package drill

import (
	"sync"
	"time"
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
