package grpcdrain

import (
	"google.golang.org/grpc/metadata"

	"github.com/drainkit/drainkit/registry"
)

// WithIdentity makes every call's response header metadata carry
// registry.IdentityMetadata ("drainkit-instance") with the value
// "<service>/<instanceID>" (the registration's service and instance ID),
// so that consumers (package consumer/grpcresolver) can tell that the
// address they called is still an instance of the service they meant, and
// not one that now belongs to another service (a recycled pod IP). Health
// checks do not carry it. It costs each call the header's allocation
// (grpc.SetHeader joins it into the call's header metadata); without it the
// request path allocates nothing. An empty service sends nothing.
func WithIdentity(service, instanceID string) Option {
	return func(s *Server) {
		if service != "" {
			s.ident = metadata.Pairs(registry.IdentityMetadata, service+"/"+instanceID)
		}
	}
}
