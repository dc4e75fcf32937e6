package consumer

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drainkit/drainkit/registry"
)

// staticSource is the Source of the views Static and StaticInstances
// deliver: a list that never changes, which the Watcher never reads again.
const staticSource = "static"

// Static returns a registry.Source that delivers one view of service listing
// addrs ("host:port", e.g. "127.0.0.1:8080"), with Source "static", Revision
// and Epoch 0 (a list that never changes has no order to reset) and the
// instance ID equal to the address, and then waits for its context
// to end. An address that does not parse, or a port outside 1-65535, is an
// error naming it; no address at all is allowed (an authoritative empty list).
func Static(service string, addrs ...string) (registry.Source, error) {
	ins := make([]registry.Instance, 0, len(addrs))
	for _, a := range addrs {
		host, p, err := net.SplitHostPort(strings.TrimSpace(a))
		if err != nil {
			return nil, fmt.Errorf("consumer: static address %q: %w", a, err)
		}
		port, err := strconv.Atoi(p)
		if err != nil || port < 1 || port > 65535 {
			return nil, fmt.Errorf("consumer: static address %q: port must be 1-65535", a)
		}
		ins = append(ins, registry.Instance{ID: strings.TrimSpace(a), Address: host, Port: port})
	}
	return StaticInstances(service, ins), nil
}

// StaticInstances returns a registry.Source that delivers one view of
// service listing instances (sorted by ID, Source "static", Revision and
// Epoch 0) and
// then waits for its context to end.
func StaticInstances(service string, instances []registry.Instance) registry.Source {
	ins := slices.Clone(instances)
	if ins == nil {
		ins = []registry.Instance{}
	}
	slices.SortFunc(ins, func(a, b registry.Instance) int { return strings.Compare(a.ID, b.ID) })
	return registry.SourceFunc(func(ctx context.Context, fn func(registry.View)) error {
		fn(registry.View{Service: service, Instances: ins, Received: time.Now(), Source: staticSource})
		<-ctx.Done()
		return ctx.Err()
	})
}
