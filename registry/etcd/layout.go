package etcd

import (
	"encoding/json"
	"fmt"

	"github.com/drainkit/drainkit/registry"
)

// metaReadyAtKey is registry.MetaReadyAt, reserved in Options.Meta.
const metaReadyAtKey = registry.MetaReadyAt

// kratosInstance is the value kratos's etcd registry writes and reads: the
// JSON encoding of github.com/go-kratos/kratos/v2/registry.ServiceInstance
// (checked against kratos v2.8.3 and contrib/registry/etcd at commit
// 16c2f39).
type kratosInstance struct {
	ID        string            `json:"id"`
	Name      string            `json:"name"`
	Version   string            `json:"version"`
	Metadata  map[string]string `json:"metadata"`
	Endpoints []string          `json:"endpoints"`
}

// Key returns the key of instance id of service under prefix, in kratos's
// layout: prefix + "/" + service + "/" + id, e.g.
// "/microservices/orders/orders-host-8080-3f2a9c0b1d4e".
func Key(prefix, service, id string) string {
	return ServicePrefix(prefix, service) + id
}

// ServicePrefix returns the prefix under which every instance of service is
// registered: prefix + "/" + service + "/". (kratos itself watches
// prefix + "/" + service without the trailing '/', and drops values whose
// name differs.)
func ServicePrefix(prefix, service string) string {
	return prefix + "/" + service + "/"
}

// Endpoint returns scheme://host:port, with IPv6 hosts bracketed
// (registry.Endpoint's String).
func Endpoint(scheme, host string, port int) string {
	return registry.Endpoint{Scheme: scheme, Address: host, Port: port}.String()
}

// EncodeValue returns the JSON value of an instance in kratos's shape.
func encodeValue(in kratosInstance) (string, error) {
	b, err := json.Marshal(in)
	return string(b), err
}

// ParseValue decodes a value in kratos's instance shape into a
// registry.Instance: ID and Meta from the value, Endpoints from every
// endpoint that parses (kratos servers register e.g. "http://10.0.0.7:8000"
// and "grpc://10.0.0.7:9000", sometimes with a query such as
// "?isSecure=false"), and Address and Port from the first endpoint whose
// scheme is scheme ("" means the first endpoint). It returns an error if the value is not such JSON, its
// name is not service, or no endpoint has the scheme.
func ParseValue(value []byte, service, scheme string) (registry.Instance, error) {
	var ki kratosInstance
	if err := json.Unmarshal(value, &ki); err != nil {
		return registry.Instance{}, fmt.Errorf("etcd: instance value: %w", err)
	}
	if ki.Name != service {
		return registry.Instance{}, fmt.Errorf("etcd: instance %q: name %q, want %q", ki.ID, ki.Name, service)
	}
	in := registry.Instance{ID: ki.ID}
	if len(ki.Metadata) > 0 {
		in.Meta = ki.Metadata
	}
	for _, s := range ki.Endpoints {
		if ep, err := registry.ParseEndpoint(s); err == nil && ep.Address != "" {
			in.Endpoints = append(in.Endpoints, ep)
		}
	}
	if len(in.Endpoints) > 0 && scheme == "" {
		scheme = in.Endpoints[0].Scheme
	}
	in, ok := in.ForScheme(scheme)
	if !ok || len(in.Endpoints) == 0 {
		return registry.Instance{}, fmt.Errorf("etcd: instance %q: no %s endpoint in %q", ki.ID, scheme, ki.Endpoints)
	}
	return in, nil
}
