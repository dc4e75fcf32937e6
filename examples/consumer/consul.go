package main

import (
	"context"
	"fmt"

	"github.com/hashicorp/consul/api"

	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/consul"
)

// consulSource watches service's passing instances in Consul (consul/api
// reads CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN and the other CONSUL_*
// variables).
func consulSource(service string) (registry.Source, error) {
	client, err := api.NewClient(api.DefaultConfig())
	if err != nil {
		return nil, fmt.Errorf("CONSUL_HTTP_ADDR: %w", err)
	}
	return registry.SourceFunc(func(ctx context.Context, fn func(registry.View)) error {
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var failed error
		err := consul.Watch(wctx, client, service, consul.WatchOptions{}, func(v consul.View) {
			fn(convert(v))
			if v.Err != nil {
				// End this watch: the consumer.Watcher restarts it with
				// backoff and a fresh index, so that an agent that comes
				// back without its state (a lower index) answers at once
				// instead of blocking on the old index.
				failed = v.Err
				cancel()
			}
		})
		if failed != nil && ctx.Err() == nil {
			return failed
		}
		return err
	}), nil
}

// convert maps a consul.View to a registry.View.
func convert(v consul.View) registry.View {
	out := registry.View{Service: v.Service, Revision: v.Index, Received: v.Received, Source: "consul", Err: v.Err, ErrAt: v.ErrAt}
	if v.Instances != nil {
		out.Instances = make([]registry.Instance, 0, len(v.Instances))
	}
	for _, in := range v.Instances {
		out.Instances = append(out.Instances, registry.Instance{ID: in.ID, Address: in.Address, Port: in.Port, Tags: in.Tags, Meta: in.Meta})
	}
	return out
}
