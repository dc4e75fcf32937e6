package main

import (
	"fmt"

	"github.com/hashicorp/consul/api"

	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/consul"
)

// consulSource watches service's passing instances in Consul (consul/api
// reads CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN and the other CONSUL_*
// variables). Its views carry Consul's index as Revision; after an error the
// watch's next query does not block, so an agent that returns is seen at
// once, and when it returns without its state (a lower index) the views
// carry a new Epoch, which the consumer.Watcher takes as the start of a new
// order.
func consulSource(service string) (registry.Source, error) {
	client, err := api.NewClient(api.DefaultConfig())
	if err != nil {
		return nil, fmt.Errorf("CONSUL_HTTP_ADDR: %w", err)
	}
	return consul.NewSource(client, service, consul.WatchOptions{}), nil
}
