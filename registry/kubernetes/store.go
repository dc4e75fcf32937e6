package kubernetes

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/registry"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	apiwatch "k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// watch is one Watch call's state. It is the store of client-go's
// Reflector (cache.ReflectorStore) rather than an informer's event handler:
// the reflector hands a store each relist whole, with the list's
// resourceVersion (Replace), which is what a relist's reset and the epoch
// need, where an informer turns it into per-object events. The reflector
// calls the store from its goroutine; Watch's goroutine builds and delivers
// the views, woken by wake (latest state wins).
type watch struct {
	namespace, service string
	opts               WatchOptions
	wake               syncx.Wake

	mu     sync.Mutex
	slices map[string]*discoveryv1.EndpointSlice // by name; objects are never modified
	listed bool                                  // a list arrived (Replace)
	rev    uint64                                // the highest resourceVersion of the epoch
	epoch  uint64                                // relists whose resourceVersion went backwards
	err    error                                 // the current failure; nil once a request succeeds
	errAt  time.Time

	// Watch's goroutine only.
	good      registry.View // the last view delivered without error
	delivered bool
	inError   bool // the last delivered view had Err set
}

func newWatch(namespace, service string, opts WatchOptions) *watch {
	return &watch{namespace: namespace, service: service, opts: opts, wake: syncx.NewWake(),
		slices: map[string]*discoveryv1.EndpointSlice{},
		good:   registry.View{Service: service, Source: SourceName}}
}

// listWatch returns the reflector's ListerWatcher: the Service's slices
// (label kubernetes.io/service-name), each request's outcome recorded (the
// reflector retries failed ones silently, or logs them).
func (w *watch) listWatch(ctx context.Context, client kubernetes.Interface) *cache.ListWatch {
	api := client.DiscoveryV1().EndpointSlices(w.namespace)
	selector := discoveryv1.LabelServiceName + "=" + w.service
	return &cache.ListWatch{
		ListWithContextFunc: func(rctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			o.LabelSelector = selector
			list, err := api.List(rctx, o)
			w.outcome(ctx, "list", err)
			return list, err
		},
		WatchFuncWithContext: func(rctx context.Context, o metav1.ListOptions) (apiwatch.Interface, error) {
			o.LabelSelector = selector
			wi, err := api.Watch(rctx, o)
			w.outcome(ctx, "watch", err)
			return wi, err
		},
	}
}

// outcome records a request's result: an error starts (or continues) a
// failure, a success ends it. Errors after ctx ended are the Watch's own.
func (w *watch) outcome(ctx context.Context, op string, err error) {
	if ctx.Err() != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if err == nil {
		if w.err != nil {
			w.err = nil
			w.wake.Notify()
		}
		return
	}
	if w.err == nil {
		w.errAt = time.Now()
	}
	// client-go's errors name the URL (the API server) but no credential.
	w.err = fmt.Errorf("kubernetes: %s endpointslices of %s/%s: %w", op, w.namespace, w.service, err)
	w.wake.Notify()
}

// The cache.ReflectorStore methods. Objects other than EndpointSlices are
// ignored (the reflector checks the type before).

func (w *watch) Add(obj any) error    { return w.put(obj) }
func (w *watch) Update(obj any) error { return w.put(obj) }

func (w *watch) put(obj any) error {
	if s, ok := obj.(*discoveryv1.EndpointSlice); ok {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.slices[s.Name] = s
		w.observeLocked(s.ResourceVersion)
		w.wake.Notify()
	}
	return nil
}

func (w *watch) Delete(obj any) error {
	if s, ok := obj.(*discoveryv1.EndpointSlice); ok {
		w.mu.Lock()
		defer w.mu.Unlock()
		delete(w.slices, s.Name)
		w.observeLocked(s.ResourceVersion) // the deletion's revision
		w.wake.Notify()
	}
	return nil
}

// Replace takes a (re)list whole: slices absent from it are gone, whatever
// events were missed. A resourceVersion lower than one seen starts a new
// epoch.
func (w *watch) Replace(list []any, resourceVersion string) error {
	next := make(map[string]*discoveryv1.EndpointSlice, len(list))
	for _, obj := range list {
		if s, ok := obj.(*discoveryv1.EndpointSlice); ok {
			next[s.Name] = s
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.slices, w.listed = next, true
	if rv, err := strconv.ParseUint(resourceVersion, 10, 64); err == nil {
		if rv < w.rev {
			w.epoch++
		}
		w.rev = rv
	}
	w.wake.Notify()
	return nil
}

// Resync is a no-op: the store holds what the API server said.
func (w *watch) Resync() error { return nil }

// UpdateResourceVersion takes the resourceVersion the reflector reached
// (after each event, and bookmarks).
func (w *watch) UpdateResourceVersion(resourceVersion string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.observeLocked(resourceVersion)
}

// observeLocked raises the revision to resourceVersion; within a watch
// they only grow.
func (w *watch) observeLocked(resourceVersion string) {
	if rv, err := strconv.ParseUint(resourceVersion, 10, 64); err == nil && rv > w.rev {
		w.rev = rv
	}
}

// deliver calls fn with the current view if it differs from the last one
// delivered: the first list's, a changed instance list, an error appearing
// (once per streak) or clearing.
func (w *watch) deliver(fn func(registry.View)) {
	w.mu.Lock()
	listed, rev, epoch, err, errAt := w.listed, w.rev, w.epoch, w.err, w.errAt
	list := slices.Collect(maps.Values(w.slices))
	w.mu.Unlock()
	if err != nil {
		if w.inError {
			return
		}
		v := w.good
		v.Err, v.ErrAt = err, errAt
		w.inError = true
		fn(v)
		return
	}
	if !listed {
		return
	}
	ins := instances(list, w.opts)
	if w.delivered && !w.inError && slices.EqualFunc(ins, w.good.Instances, registry.Instance.Equal) {
		return
	}
	w.good = registry.View{Service: w.service, Instances: ins, Revision: rev, Epoch: epoch, Received: time.Now(), Source: SourceName}
	w.delivered, w.inError = true, false
	fn(w.good)
}

var (
	_ cache.ReflectorStore         = (*watch)(nil)
	_ cache.ResourceVersionUpdater = (*watch)(nil)
)
