package grpcdrain

import (
	"google.golang.org/grpc/metadata"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
)

// WithIdentity sets the identity every call's response header metadata
// carries: registry.IdentityMetadata ("drainkit-instance") with the value
// "<service>/<instanceID>", so that consumers (package
// consumer/grpcresolver) can tell that the address they called is still an
// instance of the service they meant, and not one that now belongs to
// another service (a recycled pod IP). Calls to a method the server lacks
// carry it too (answered UNIMPLEMENTED by grpcdrain's unknown-service
// handler, through the interceptors), so that a consumer can tell that
// nothing ran and send the call elsewhere. Health checks do not carry it.
//
// Without WithIdentity the Server names the instance its lifecycle's first
// registrar registers, as the root package's HTTP listeners do: the first
// registrar whose status detail (lifecycle.StatusDetailer) is a
// registry.Status with a service, as those of registry/consul, etcd and
// nacos are, read when Serve starts; none sends nothing. An empty service
// sends nothing either, whatever the registrars.
//
// It costs each call the header's allocation (grpc.SetHeader joins it into
// the call's header metadata); without an identity the request path
// allocates nothing.
func WithIdentity(service, instanceID string) Option {
	return func(s *Server) {
		s.identSet = true
		s.ident = nil
		if service != "" {
			s.ident = metadata.Pairs(registry.IdentityMetadata, service+"/"+instanceID)
		}
	}
}

// registeredIdentity returns the identity of the first registrar of lc
// whose status detail is a registry.Status naming a service; nil if none.
func registeredIdentity(lc *lifecycle.Lifecycle) metadata.MD {
	for _, r := range lc.Status().Registry {
		if st, ok := r.Detail.(registry.Status); ok && st.Service != "" {
			return metadata.Pairs(registry.IdentityMetadata, st.Service+"/"+st.ID)
		}
	}
	return nil
}
