package drainkit

import (
	"fmt"
	"log/slog"
	"net"
	"strings"

	"github.com/drainkit/drainkit/registry"
)

// Bound is what a Registration's Build gets besides the settings, once the
// listeners are bound.
type Bound struct {
	// Addrs are every listener's bound address by name, "admin" included
	// (a port 0 resolved).
	Addrs map[string]net.Addr
	// Endpoints are the instance's endpoints, one per service listener with
	// a scheme, in the order the program added them: the scheme ("http" for
	// WithHTTP, "https" with TLS, "grpc" for WithServer, or as set by
	// WithEndpointScheme), the listener's IP (empty when it is bound to an
	// unspecified address such as ":8080": the registrar fills in the
	// instance's address) and its bound port. A registrar registers them
	// all in one registration (registry/etcd's and registry/consul's
	// Options.SetEndpoints): one registration per instance, which the drain
	// removes at once. The admin listener is never among them.
	Endpoints []registry.Endpoint
	// Logger is the program's logger (WithLogger, or Main's JSON lines),
	// for the registrar's own lines.
	Logger *slog.Logger
}

// WithEndpointScheme sets the scheme under which listener name is
// registered (Bound.Endpoints), e.g. "h2c" or "grpc"; "" keeps the
// listener out of the registration. Consumers pick an instance's endpoint
// by scheme, so a registering program's listeners have distinct schemes:
// two listeners with one scheme make Main exit 2 before any listener
// opens. A name that is no listener also makes Main exit 2.
func WithEndpointScheme(name, scheme string) Option {
	return func(s *service) { s.schemes = append(s.schemes, [2]string{name, scheme}) }
}

// applySchemes applies WithEndpointScheme to the listeners.
func (s *service) applySchemes() error {
	for _, ns := range s.schemes {
		found := false
		for i := range s.listeners {
			if s.listeners[i].name == ns[0] {
				s.listeners[i].scheme, found = strings.ToLower(ns[1]), true
			}
		}
		if !found {
			return fmt.Errorf("WithEndpointScheme(%q, %q): no listener is named %q", ns[0], ns[1], ns[0])
		}
	}
	return nil
}

// checkSchemes fails when two registered listeners share a scheme (a
// consumer would only ever reach the first) or a scheme is no scheme.
func (s *service) checkSchemes() error {
	const fix = "one registration per instance holds one endpoint per scheme: set another scheme, or none, with drainkit.WithEndpointScheme"
	by := map[string]string{}
	for _, l := range s.listeners {
		switch other, dup := by[l.scheme]; {
		case l.scheme == "":
		case !registry.ValidServiceName(l.scheme):
			return fmt.Errorf("listener %s: endpoint scheme %q: want letters, digits, '-', '_' and '.', e.g. http or grpc", l.name, l.scheme)
		case dup:
			return fmt.Errorf("listeners %s and %s are both registered with endpoint scheme %q (%s)", other, l.name, l.scheme, fix)
		default:
			by[l.scheme] = l.name
		}
	}
	return nil
}

// endpoints returns Bound.Endpoints for the bound addresses.
func (s *service) endpoints(bound map[string]net.Addr) []registry.Endpoint {
	var eps []registry.Endpoint
	for _, l := range s.listeners {
		tcp, ok := bound[l.name].(*net.TCPAddr)
		if l.scheme == "" || !ok {
			continue
		}
		ep := registry.Endpoint{Scheme: l.scheme, Port: tcp.Port}
		if !tcp.IP.IsUnspecified() {
			ep.Address = tcp.IP.String()
		}
		eps = append(eps, ep)
	}
	return eps
}
