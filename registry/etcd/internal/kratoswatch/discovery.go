package kratoswatch

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/go-kratos/kratos/v2/registry"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Discovery is kratos's etcd registry.Discovery, read side only.
type Discovery struct {
	client    *clientv3.Client
	namespace string // kratos's default: "/microservices"
}

var _ registry.Discovery = (*Discovery)(nil)

// New returns the Discovery of client under namespace ("" means kratos's
// default, "/microservices").
func New(client *clientv3.Client, namespace string) *Discovery {
	if namespace == "" {
		namespace = "/microservices"
	}
	return &Discovery{client: client, namespace: namespace}
}

// GetService returns the instances of name, as kratos reads them.
func (d *Discovery) GetService(ctx context.Context, name string) ([]*registry.ServiceInstance, error) {
	return list(ctx, d.client, d.namespace+"/"+name, name)
}

// Watch returns a registry.Watcher of name whose first Next lists the
// instances and every later Next waits for a change and lists them again.
func (d *Discovery) Watch(ctx context.Context, name string) (registry.Watcher, error) {
	key := d.namespace + "/" + name
	ctx, cancel := context.WithCancel(ctx)
	w := &watcher{ctx: ctx, cancel: cancel, client: d.client, watcher: clientv3.NewWatcher(d.client), key: key, name: name, first: true}
	w.events = w.watcher.Watch(ctx, key, clientv3.WithPrefix(), clientv3.WithRev(0), clientv3.WithKeysOnly())
	if err := w.watcher.RequestProgress(context.Background()); err != nil {
		cancel()
		return nil, errors.Join(err, w.watcher.Close())
	}
	return w, nil
}

// list reads every value under key and keeps the instances named name; a
// value that is not a ServiceInstance fails the read, as in kratos.
func list(ctx context.Context, c *clientv3.Client, key, name string) ([]*registry.ServiceInstance, error) {
	resp, err := c.Get(ctx, key, clientv3.WithPrefix())
	if err != nil {
		return nil, err
	}
	out := make([]*registry.ServiceInstance, 0, len(resp.Kvs))
	for _, kv := range resp.Kvs {
		in := &registry.ServiceInstance{}
		if err := json.Unmarshal(kv.Value, in); err != nil {
			return nil, err
		}
		if in.Name == name {
			out = append(out, in)
		}
	}
	return out, nil
}

type watcher struct {
	ctx     context.Context
	cancel  context.CancelFunc
	client  *clientv3.Client
	watcher clientv3.Watcher
	events  clientv3.WatchChan
	key     string
	name    string
	first   bool
}

// Next returns the instances at once the first time, then after each
// batch of watch events (or ctx's error once the watcher is stopped).
func (w *watcher) Next() ([]*registry.ServiceInstance, error) {
	if w.first {
		w.first = false
		return list(w.ctx, w.client, w.key, w.name)
	}
	select {
	case <-w.ctx.Done():
		return nil, w.ctx.Err()
	case <-w.events:
		return list(w.ctx, w.client, w.key, w.name)
	}
}

// Stop ends the watch.
func (w *watcher) Stop() error {
	w.cancel()
	return w.watcher.Close()
}
