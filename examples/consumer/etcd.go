package main

import (
	"errors"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/etcd"
)

// etcdFlags maps the configuration keys that registry/etcd's validation
// errors name to the flags of this command that set them.
var etcdFlags = map[string]string{
	"registry.service":        "--service",
	"registry.etcd.endpoints": "--etcd",
	"registry.etcd.prefix":    "--etcd-prefix",
}

// etcdSource watches service's instances in etcd at the --etcd endpoints
// (a comma-separated list, as registry.etcd.endpoints), in kratos's layout
// under --etcd-prefix: the keys that registry/etcd's Registrar, and so
// examples/httpservice with ETCD_ENDPOINTS, write. The endpoints, prefix and
// service name are checked by the Registrar's own rules, and the client
// takes its defaults (a 5s dial timeout). Its views carry etcd's store
// revision as Revision. closeClient closes the etcd client; call it after the
// Watcher is closed.
func etcdSource(f flags) (src registry.Source, closeClient func(), err error) {
	o := etcd.DefaultOptions(f.service, 1) // the port is the Registrar's, unused here
	o.Client.Endpoints = config.EtcdConfig{Endpoints: f.etcd}.EndpointList()
	o.Prefix = f.etcdPrefix
	if err := o.Validate(); err != nil {
		if re := (*budget.RangeError)(nil); errors.As(err, &re) && etcdFlags[re.Key] != "" {
			return nil, nil, fmt.Errorf("%s %s: %s", etcdFlags[re.Key], re.Value, re.Allowed)
		}
		return nil, nil, fmt.Errorf("--etcd: %w", err)
	}
	o.Client.Logger = zap.NewNop() // the Watcher logs the source's errors
	client, err := clientv3.New(o.Client)
	if err != nil {
		return nil, nil, fmt.Errorf("--etcd %s: %w", f.etcd, err)
	}
	// No WatchOptions.Scheme: the Transport picks each instance's "http"
	// endpoint itself, and logs a service whose instances serve none.
	src = etcd.NewSource(client, f.service, etcd.WatchOptions{Prefix: o.Prefix})
	return src, func() { client.Close() }, nil
}
