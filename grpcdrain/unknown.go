package grpcdrain

import (
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// unknown is the grpc.UnknownServiceHandler of every grpc.Server the
// Server builds: it answers a call to a method no service registered with
// codes.Unimplemented and grpc-go's own message, as grpc-go does without
// such a handler, but with drainkit's interceptors around it (grpc-go runs
// the stream interceptors for this handler, and nothing without it). So
// the answer names the instance (WithIdentity) like any other: a consumer
// that reached an address now serving another service, one that lacks the
// method, can tell (UNIMPLEMENTED alone it could not tell from its own
// service's answer), eject the address and send the call again, since the
// method never ran. The call counts as an arrival and, while it is
// answered, as a stream in flight. A handler given with
// grpc.UnknownServiceHandler in WithServerOptions (a proxy) replaces this
// one, and gets the same interceptors.
func (g *generation) unknown(_ any, ss grpc.ServerStream) error {
	m, _ := grpc.Method(ss.Context())
	svc, method := strings.TrimPrefix(m, "/"), ""
	if i := strings.LastIndexByte(svc, '/'); i >= 0 { // where grpc-go splits
		svc, method = svc[:i], svc[i+1:]
	}
	if _, known := g.services()[svc]; known {
		return status.Errorf(codes.Unimplemented, "unknown method %v for service %v", method, svc)
	}
	return status.Errorf(codes.Unimplemented, "unknown service %v", svc)
}

// serviceNames returns the names of the services registered on g's
// grpc.Server (all of them are before it serves).
func (g *generation) serviceNames() map[string]struct{} {
	names := map[string]struct{}{}
	for name := range g.gs.GetServiceInfo() {
		names[name] = struct{}{}
	}
	return names
}
