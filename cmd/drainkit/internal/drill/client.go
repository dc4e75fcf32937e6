package drill

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/registry"
)

// Consumer kinds (Config.ConsumerKind, `drill --consumer`).
const (
	// ConsumerNaive is a consumer as most are written: round robin over the
	// discovery's current list (optionally cached, Config.ConsumerCache),
	// no retry, no ejection.
	ConsumerNaive = "naive"
	// ConsumerDrainkit is drainkit's consumer package fed from the same
	// discovery: retries what never reached a server, ejects what fails,
	// treats its view as evidence with an age.
	ConsumerDrainkit = "drainkit"
)

// Request is what the load sends: Method and Path, with Body (nil for
// none). Clients must send a fresh reader over Body per attempt (Body is
// shared and must not be modified).
type Request struct {
	Method string
	Path   string
	Body   []byte
}

// ErrNoEndpoint is (wrapped in) Attempt.Err when the consumer had no
// instance to send to: its view of the service was empty, or every instance
// in it was ejected.
var ErrNoEndpoint = errors.New("the consumer's view of the service is empty")

// Attempt is how one request through a Client ended.
type Attempt struct {
	// Addr is the host:port of the instance whose answer or failure this is
	// (the last one tried); "" when no instance was tried.
	Addr string
	// Status is the response's status code, 0 without a response. Err is
	// the error of the last try (the client's or reading the body's), nil
	// when a response was read to the end.
	Status int
	Err    error
	// Retries is how many times the request was sent again, to the same or
	// another instance, after its first try failed.
	Retries int
	// ViewAge is the age of the consumer's view (registry.View.Age) when it
	// picked the instance, 0 when the client does not know it.
	ViewAge time.Duration
	// FirstAddr and Unanswered are, for a client the drill's HTTP trace
	// cannot follow (gRPC), the first instance the request went toward and
	// the first it was sent to without an answer ("" for none); the trace's
	// findings win when it has any.
	FirstAddr, Unanswered string
}

// ClientStats are a client's cumulative counters, read once at the end of
// the load.
type ClientStats struct {
	// Ejections counts instances the consumer took out of its rotation
	// locally (outlier ejection), 0 for a consumer that never ejects.
	Ejections int64
	// BudgetDenied counts the retries the consumer's retry budget refused
	// (0 for a consumer without one).
	BudgetDenied int64
}

// Client is one consumer of the service under drill. Do is called from
// many goroutines at once, at the load's rate.
type Client interface {
	// Do sends r to an instance of the service, bounded by ctx (the
	// request timeout), reads the response body to the end and reports the
	// outcome. The drill traces an HTTP request through ctx
	// (net/http/httptrace): a client must send it with ctx or a context
	// derived from it. A client the trace cannot follow (gRPC) reports
	// Attempt.FirstAddr and Unanswered itself.
	Do(ctx context.Context, r Request) Attempt
	// Listed returns the host:ports the client's next request could go to,
	// without side effects (a cache must not refresh for it). The drill keeps
	// the load running while a replaced replica is listed.
	Listed() []string
	// Stats returns the client's counters so far.
	Stats() ClientStats
	// Close releases the client's connections and background work.
	Close()
}

// ClientConfig is what a consumer kind is built from: one consumer of one
// strategy run.
type ClientConfig struct {
	// ID numbers the consumer (1..Config.Consumers).
	ID int
	// Service is the name of the service under drill (the Consul service
	// with --consul).
	Service string
	// Views is the drill's discovery as registry views (readiness probes or
	// a Consul watch), already behind the consumer's cache when
	// Config.ConsumerCache is set.
	Views registry.Source
	// Endpoints is the same discovery as a list pulled per request, also
	// behind the cache (what the naive consumer uses).
	Endpoints Source
	// Timeout is the request timeout (also the deadline of ctx in Do).
	Timeout time.Duration
	// Dial is how the consumer must open its connections to instances
	// (http.Transport.DialContext): the drill counts what each request
	// wrote through it, to tell a request that may have reached a dying
	// replica from one that never left the consumer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Zones is the consumer's zone-aware picking (ScenarioZoneLoss); the
	// zero value is off. A consumer kind that knows no zones ignores it.
	Zones consumer.Zones
	// TryTimeout, if > 0, bounds each try of a consumer that retries (a
	// response header must arrive within it; ScenarioBrownout); 0 means
	// only Timeout bounds the request.
	TryTimeout time.Duration
	// spring is the run's Spring Cloud consumer, which ConsumerSpring's
	// clients send through (nil for other kinds).
	spring *springJVM
}

// NewClientFunc builds one consumer of a kind. It must not block; errors
// are reported as the strategy run's error.
type NewClientFunc func(ClientConfig) (Client, error)

var clientKinds = struct {
	mu    sync.Mutex
	kinds map[string]NewClientFunc
}{kinds: map[string]NewClientFunc{ConsumerNaive: newNaiveClient}}

// RegisterConsumer makes a consumer kind available to `drill --consumer`
// (call it from an init function in the file that implements the kind). It
// panics if kind is registered twice.
func RegisterConsumer(kind string, f NewClientFunc) {
	clientKinds.mu.Lock()
	defer clientKinds.mu.Unlock()
	if _, dup := clientKinds.kinds[kind]; dup {
		panic("drill: consumer kind " + kind + " registered twice")
	}
	clientKinds.kinds[kind] = f
}

// consumerKind returns the constructor of kind, or an error naming the
// flag and the kinds this build has.
func consumerKind(kind string) (NewClientFunc, error) {
	clientKinds.mu.Lock()
	defer clientKinds.mu.Unlock()
	if f, ok := clientKinds.kinds[kind]; ok {
		return f, nil
	}
	have := slices.Sorted(maps.Keys(clientKinds.kinds))
	if kind == ConsumerDrainkit {
		return nil, fmt.Errorf("--consumer: %q is not available in this build (the drainkit consumer package is not wired into the drill yet); available: %v", kind, have)
	}
	return nil, fmt.Errorf("--consumer: %q is not a consumer kind: want one of %v", kind, have)
}
