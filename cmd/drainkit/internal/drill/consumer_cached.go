package drill

import (
	"net/http"
	"strconv"
	"time"

	"github.com/drainkit/drainkit/registry"
)

// ConsumerCached is a consumer behind a list-caching balancer, as a Spring
// Cloud LoadBalancer client is with its default
// CachingServiceInstanceListSupplier, without Java: each consumer keeps the
// instance list it fetched for Config.ConsumerCache (SpringCacheTTL unless
// set), round robin over it, no retry, no ejection. Each names itself in
// the drainkit consumer header (registry.ConsumerHeader, "cached-<n>"),
// standing for the IP of its own that each real consumer pod has: the
// drill's consumers all send from 127.0.0.1, and a provider's propagation
// window tells callers apart by IP and identity. With --rate 2 --consumers
// 1 it is the slow consumer behind the cache of issue 32.
const ConsumerCached = "cached"

// SpringCacheTTL is Spring Cloud LoadBalancer's default cache TTL
// (spring.cloud.loadbalancer.cache.ttl), ConsumerCached's default cache.
const SpringCacheTTL = 35 * time.Second

func init() { RegisterConsumer(ConsumerCached, newCachedClient) }

// newCachedClient implements NewClientFunc for ConsumerCached: a naive
// consumer of c.Endpoints (behind the cache newClients put there) whose
// requests name it.
func newCachedClient(c ClientConfig) (Client, error) {
	n := newNaive(c.Endpoints)
	n.header = http.Header{registry.ConsumerHeader: {"cached-" + strconv.Itoa(c.ID)}}
	return n, nil
}
