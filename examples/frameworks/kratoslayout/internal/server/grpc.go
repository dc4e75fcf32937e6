package server

import (
	"github.com/go-kratos/kratos/v2/log"
	"github.com/go-kratos/kratos/v2/middleware/recovery"
	kgrpc "github.com/go-kratos/kratos/v2/transport/grpc"

	v1 "github.com/drainkit/drainkit/examples/frameworks/kratoslayout/api/helloworld/v1"
	"github.com/drainkit/drainkit/examples/frameworks/kratoslayout/internal/conf"
	"github.com/drainkit/drainkit/examples/frameworks/kratoslayout/internal/service"
)

// GRPCFactory builds the service's kratos gRPC server with the given
// options added to its own; newApp adds what drainkit needs (its
// interceptors, its health service, the bound listener's endpoint) and
// hands it to grpcdrain.Adopt, which calls it once per grpc.Server the
// drain needs.
type GRPCFactory func(opts ...kgrpc.ServerOption) *kgrpc.Server

// NewGRPCServer returns the factory of the service's gRPC server. It sets
// no kgrpc.Address or kgrpc.Network: drainkit owns the listener, on
// --grpc-addr, whose default is server.grpc.addr.
func NewGRPCServer(c *conf.Server, greeter *service.GreeterService, logger log.Logger) GRPCFactory {
	return func(drainOpts ...kgrpc.ServerOption) *kgrpc.Server {
		var opts = []kgrpc.ServerOption{
			kgrpc.Middleware(
				recovery.Recovery(),
			),
		}
		if c.Grpc.Timeout != nil {
			opts = append(opts, kgrpc.Timeout(c.Grpc.Timeout.AsDuration()))
		}
		srv := kgrpc.NewServer(append(opts, drainOpts...)...)
		v1.RegisterGreeterServer(srv, greeter)
		return srv
	}
}
