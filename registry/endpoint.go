package registry

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Endpoint is one address an instance serves, named by its URL scheme:
// kratos's ServiceInstance.Endpoints entry "grpc://10.0.0.7:9090" is
// Endpoint{Scheme: "grpc", Address: "10.0.0.7", Port: 9090}. A process that
// serves HTTP and gRPC registers one instance with both endpoints, and each
// consumer takes the endpoint of its protocol (Instance.ForScheme).
type Endpoint struct {
	// Scheme names the protocol, lower case: "http", "https", "grpc".
	Scheme string `json:"scheme"`
	// Address is the host or IP consumers dial. A registrar fills an empty
	// Address with its own (the instance's) address.
	Address string `json:"address"`
	// Port is the port consumers dial, 1 to 65535.
	Port int `json:"port"`
}

// HostPort returns Address and Port joined for dialling.
func (e Endpoint) HostPort() string {
	return net.JoinHostPort(e.Address, strconv.Itoa(e.Port))
}

// String returns the endpoint as kratos writes it: scheme://host:port, IPv6
// hosts bracketed ("grpc://[::1]:9090").
func (e Endpoint) String() string {
	return e.Scheme + "://" + e.HostPort()
}

// ParseEndpoint parses "scheme://host:port" (kratos's form; a path or a
// query such as "?isSecure=false" is ignored). The scheme is returned in
// lower case. A missing scheme or port, or a port outside 1 to 65535, is an
// error. An empty host ("grpc://:9090", written by a registration that left
// its address to the registry, see registry/consul) gives an empty Address.
func ParseEndpoint(s string) (Endpoint, error) {
	u, err := url.Parse(s)
	if err != nil {
		return Endpoint{}, fmt.Errorf("registry: endpoint %q: %w", s, err)
	}
	if u.Scheme == "" || u.Host == "" || u.Opaque != "" {
		return Endpoint{}, fmt.Errorf("registry: endpoint %q: want scheme://host:port", s)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil || port < 1 || port > 65535 {
		return Endpoint{}, fmt.Errorf("registry: endpoint %q: no port between 1 and 65535", s)
	}
	return Endpoint{Scheme: strings.ToLower(u.Scheme), Address: u.Hostname(), Port: port}, nil
}

// CheckEndpoints returns an error for the first endpoint of eps whose scheme
// is not 1 to 255 letters, digits, '-', '_' and '.' or whose port is outside
// 1 to 65535, and for a scheme listed twice (case-insensitively): a
// consumer takes the first endpoint of its scheme, so a second one would
// never be used, and Consul's tagged addresses hold one per scheme. The
// error names the endpoint by its index in eps.
func CheckEndpoints(eps []Endpoint) error {
	seen := map[string]int{}
	for i, e := range eps {
		s := strings.ToLower(e.Scheme)
		switch {
		case !ValidServiceName(e.Scheme):
			return fmt.Errorf("endpoint %d: scheme %q: must be 1 to 255 letters, digits, '-', '_' and '.', e.g. http or grpc", i, e.Scheme)
		case e.Port < 1 || e.Port > 65535:
			return fmt.Errorf("endpoint %d (%s): port %d: must be between 1 and 65535", i, e.Scheme, e.Port)
		}
		if j, dup := seen[s]; dup {
			return fmt.Errorf("endpoint %d: scheme %q is endpoint %d's already: one endpoint per scheme", i, e.Scheme, j)
		}
		seen[s] = i
	}
	return nil
}

// ForScheme returns the instance as a consumer of scheme dials it: a copy
// whose Address and Port are those of its first endpoint with that scheme
// (compared case-insensitively), and ok true. An instance that registered
// no Endpoints (a static list, a registration without schemes) has one
// address for every protocol: it is returned as it is. An instance whose
// Endpoints lack the scheme returns ok false: it does not serve that
// protocol, and the consumer leaves it out. scheme "" returns the instance
// as it is.
func (i Instance) ForScheme(scheme string) (Instance, bool) {
	if scheme == "" || len(i.Endpoints) == 0 {
		return i, true
	}
	for _, e := range i.Endpoints {
		if strings.EqualFold(e.Scheme, scheme) {
			i.Address, i.Port = e.Address, e.Port
			return i, true
		}
	}
	return i, false
}

// EndpointsAt returns eps with every Address set to address, the address an
// instance registers at whatever its listeners are bound to (registry.address:
// a pod IP from the downward API); an empty address returns eps unchanged.
// eps itself is not modified.
func EndpointsAt(eps []Endpoint, address string) []Endpoint {
	if address == "" {
		return eps
	}
	out := append([]Endpoint(nil), eps...)
	for i := range out {
		out[i].Address = address
	}
	return out
}

// RegisteredEndpoints returns the endpoints a registrar registers for an
// instance: the primary one (scheme at address and port) first, then
// extra, each empty Address filled with address. extra is not modified.
func RegisteredEndpoints(scheme, address string, port int, extra []Endpoint) []Endpoint {
	eps := append([]Endpoint{{Scheme: scheme, Address: address, Port: port}}, extra...)
	for i := range eps {
		if eps[i].Address == "" {
			eps[i].Address = address
		}
	}
	return eps
}
