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
		return consul.Watch(ctx, client, service, consul.WatchOptions{}, func(v consul.View) {
			fn(convert(v))
		})
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
