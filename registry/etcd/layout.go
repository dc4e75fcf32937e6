package etcd

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

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

// Endpoint returns scheme://host:port, with IPv6 hosts bracketed.
func Endpoint(scheme, host string, port int) string {
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(port))
}

// EncodeValue returns the JSON value of an instance in kratos's shape.
func encodeValue(in kratosInstance) (string, error) {
	b, err := json.Marshal(in)
	return string(b), err
}

// ParseValue decodes a value in kratos's instance shape into a
// registry.Instance: ID and Meta from the value, Address and Port from the
// first endpoint whose scheme is scheme (kratos servers register e.g.
// "http://10.0.0.7:8000" and "grpc://10.0.0.7:9000", sometimes with a query
// such as "?isSecure=false"). It returns an error if the value is not such
// JSON, its name is not service, or no endpoint has the scheme.
func ParseValue(value []byte, service, scheme string) (registry.Instance, error) {
	var ki kratosInstance
	if err := json.Unmarshal(value, &ki); err != nil {
		return registry.Instance{}, fmt.Errorf("etcd: instance value: %w", err)
	}
	if ki.Name != service {
		return registry.Instance{}, fmt.Errorf("etcd: instance %q: name %q, want %q", ki.ID, ki.Name, service)
	}
	for _, ep := range ki.Endpoints {
		host, port, err := splitEndpoint(ep, scheme)
		if err != nil {
			continue
		}
		in := registry.Instance{ID: ki.ID, Address: host, Port: port}
		if len(ki.Metadata) > 0 {
			in.Meta = ki.Metadata
		}
		return in, nil
	}
	return registry.Instance{}, fmt.Errorf("etcd: instance %q: no %s endpoint in %q", ki.ID, scheme, ki.Endpoints)
}

func splitEndpoint(ep, scheme string) (string, int, error) {
	u, err := url.Parse(ep)
	if err != nil {
		return "", 0, err
	}
	if !strings.EqualFold(u.Scheme, scheme) {
		return "", 0, errors.New("other scheme")
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil || port < 1 || port > 65535 || u.Hostname() == "" {
		return "", 0, fmt.Errorf("endpoint %q: no host and port", ep)
	}
	return u.Hostname(), port, nil
}
