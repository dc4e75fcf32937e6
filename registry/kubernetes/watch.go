package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/drainkit/drainkit/registry"
	"github.com/go-logr/logr"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// SourceName is View.Source for views from EndpointSlices.
const SourceName = "kubernetes"

// WatchOptions tune Watch and NewSource. The zero value is ready to use.
type WatchOptions struct {
	// Zone is the consumer's own zone (consumer.Zones.Local), used only to
	// read topology-aware routing hints that name several zones for one
	// endpoint: such an endpoint is in Zone for this consumer when its
	// hints name Zone, else in the first zone they name. "" takes the
	// first. The EndpointSlice controller hints each endpoint for one zone,
	// so it matters only for slices written by others.
	Zone string
	// PortName, if set, selects the Service port (by name) that a View's
	// Address and Port come from, and instances without that port are left
	// out. "" (the default) delivers every instance at its unnamed port (a
	// single-port Service) or its first port by name: drainkit's consumers
	// pick their endpoint by scheme (consumer.Options.Scheme, default
	// "http"; grpcresolver's EndpointScheme, default "grpc") among
	// registry.Instance.Endpoints, one per named port, so name the
	// Service's ports after them. Set it only for a consumer of your own
	// that dials Address and Port.
	PortName string
	// AddressType restricts the watch to the slices of one address family,
	// discoveryv1.AddressTypeIPv4 or AddressTypeIPv6; "" (the default)
	// takes both. A dual-stack Service lists each pod once per family, as
	// two instances: set it there. Slices of type FQDN (deprecated, without
	// semantics in the API) are always left out.
	AddressType discoveryv1.AddressType
	// MinBackoff and MaxBackoff bound client-go's jittered exponential
	// backoff between failed lists and watches: the first wait is about
	// MinBackoff, doubling up to MaxBackoff (client-go resets it after 2
	// minutes without failure). 0 means 250ms and 10s (client-go's own
	// default, 800ms to 30s, would leave a consumer on a stale view for up
	// to half a minute after the API server is back).
	MinBackoff, MaxBackoff time.Duration
	// Logger receives client-go's log lines for this watch (its reflector's);
	// nil means slog.Default().
	Logger *slog.Logger
}

// Defaults for zero WatchOptions fields.
const (
	DefaultMinBackoff = 250 * time.Millisecond
	DefaultMaxBackoff = 10 * time.Second
)

func (o WatchOptions) withDefaults() WatchOptions {
	if o.MinBackoff <= 0 {
		o.MinBackoff = DefaultMinBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// NewSource returns a registry.Source of the endpoints of Service service in
// namespace (see Watch for the rules).
func NewSource(client kubernetes.Interface, namespace, service string, opts WatchOptions) registry.Source {
	return registry.SourceFunc(func(ctx context.Context, fn func(registry.View)) error {
		return Watch(ctx, client, namespace, service, opts, fn)
	})
}

// Watch follows every EndpointSlice of Service service in namespace (label
// kubernetes.io/service-name) with client-go's reflector, the list-and-watch
// engine of its informers, and calls fn with a registry.View (Source
// "kubernetes") of the endpoints in rotation:
//
//   - the slices are merged, as the API requires of consumers: a Service
//     has as many as its endpoints need (at most 1000 per slice, 100 by
//     default), and slices written by others than the EndpointSlice
//     controller count as well. An address listed twice (an endpoint moving
//     between slices, a pod IP reused while the old pod terminates) is one
//     instance: the copy that is not terminating wins, as in kube-proxy,
//     with the ports of both. Instance.ID and Address are the address
//     (the first of the endpoint's), in canonical form;
//   - conditions, as kube-proxy reads them (KEP-1669): the ready endpoints
//     are in rotation (a nil ready counts as ready). When no endpoint is
//     ready, the serving ones that are terminating are, marked
//     MetaTerminating: a terminating pod still passing its readiness probe
//     (drainkit's /servingz passes until its listeners close) gets traffic
//     only when nothing else can take it, at a scale to zero or when every
//     pod terminates at once, rather than the consumer failing every
//     request. While one endpoint is ready, a terminating one gets nothing,
//     whatever its serving condition;
//   - ports: each TCP port of the slice with a number is an
//     Instance.Endpoints entry whose Scheme is the port's name, so a
//     consumer.Transport takes the port named "http" and the gRPC resolver
//     the one named "grpc" (a headless Service's pods alike). An unnamed
//     port (a single-port Service) serves every protocol: the instance then
//     names no endpoint and is dialled at Address and Port;
//   - zones: MetaZone is the endpoint's zone for consumer.Zones, its
//     topology-aware routing hint (hints.forZones, see WatchOptions.Zone)
//     when every endpoint in rotation carries one (kube-proxy's rule), else
//     endpoint.zone; MetaTopologyZone is always endpoint.zone. A consumer
//     honouring the hints keeps its requests with the endpoints hinted for
//     its zone, as kube-proxy does, and unlike kube-proxy spills the
//     deficit to the others when they fail or leave (consumer.Zones; its
//     Strict is kube-proxy's behaviour). Node hints (hints.forNodes) are
//     not read: a consumer is no node;
//   - revisions: View.Revision is the highest resourceVersion seen (the
//     list's, then each event's object's, bookmarks included), read as the
//     unsigned integer every etcd-backed API server sends (one that does not
//     parse leaves it unchanged). A relist (client-go lists again after a
//     watch it cannot resume: a compacted resourceVersion, "410 Gone", a
//     broken connection) replaces the whole set of slices, so a slice
//     deleted meanwhile is never missed; when its resourceVersion is lower
//     than one already seen (an API server whose etcd was restored from a
//     backup), the views from then on carry the next View.Epoch, so a
//     consumer takes them. Epoch starts at 0 within one Watch call;
//   - errors: a failed list or watch request delivers the last good view
//     with Err set (once per failure streak), and client-go retries after
//     a jittered backoff (WatchOptions.MinBackoff, MaxBackoff); the next
//     accepted request clears the error. A dead connection is noticed by
//     client-go's HTTP/2 health check (a ping after 30s of silence, 15s
//     for its answer).
//
// It delivers the first view once the slices are listed (a Service without
// slices lists no instance), then only when the instances or the error
// changed. The EndpointSlices carry no READY time: Instance.ReadyAt is
// unknown and consumers start the instances without slow start. The
// client's credentials need list and watch on endpointslices
// (discovery.k8s.io) in namespace.
//
// fn runs in Watch's goroutine, one call at a time. Watch returns ctx.Err()
// when ctx is done, or an error at once if client is nil, namespace or
// service is not a valid name, or AddressType is none of "", IPv4, IPv6.
func Watch(ctx context.Context, client kubernetes.Interface, namespace, service string, opts WatchOptions, fn func(registry.View)) error {
	if client == nil {
		return errors.New("kubernetes: Watch: nil client")
	}
	if errs := validation.IsDNS1123Label(namespace); len(errs) > 0 {
		return fmt.Errorf("kubernetes: Watch: namespace %q: %s", namespace, strings.Join(errs, "; "))
	}
	if errs := validation.IsDNS1035Label(service); len(errs) > 0 {
		return fmt.Errorf("kubernetes: Watch: service %q: %s", service, strings.Join(errs, "; "))
	}
	switch opts.AddressType {
	case "", discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6:
	default:
		return fmt.Errorf("kubernetes: Watch: WatchOptions.AddressType %q: want \"\" (both), %q or %q",
			opts.AddressType, discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6)
	}
	opts = opts.withDefaults()
	w := newWatch(namespace, service, opts)
	name := "drainkit endpointslices " + namespace + "/" + service
	logger := logr.FromSlogHandler(opts.Logger.Handler()).WithValues("service", service, "namespace", namespace)
	r := cache.NewReflectorWithOptions(w.listWatch(ctx, client), &discoveryv1.EndpointSlice{}, w, cache.ReflectorOptions{
		Name: name, Logger: &logger,
		Backoff: &wait.Backoff{Duration: opts.MinBackoff, Cap: opts.MaxBackoff, Factor: 2, Jitter: 1,
			Steps: int(math.Ceil(float64(opts.MaxBackoff) / float64(opts.MinBackoff)))},
	})
	rctx, cancel := context.WithCancel(klog.NewContext(ctx, logger))
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.RunWithContext(rctx)
	}()
	defer func() {
		cancel()
		<-done
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-w.wake.C():
			w.deliver(fn)
		}
	}
}
