package server

import (
	"github.com/go-kratos/kratos/v2/log"
	"github.com/go-kratos/kratos/v2/middleware/recovery"
	khttp "github.com/go-kratos/kratos/v2/transport/http"

	v1 "github.com/drainkit/drainkit/examples/frameworks/kratoslayout/api/helloworld/v1"
	"github.com/drainkit/drainkit/examples/frameworks/kratoslayout/internal/conf"
	"github.com/drainkit/drainkit/examples/frameworks/kratoslayout/internal/service"
)

// NewHTTPServer returns the service's kratos HTTP server, as the layout
// writes it but without khttp.Address and khttp.Network: drainkit serves
// its embedded *http.Server on the listener of --http-addr, whose default is
// server.http.addr.
func NewHTTPServer(c *conf.Server, greeter *service.GreeterService, logger log.Logger) *khttp.Server {
	var opts = []khttp.ServerOption{
		khttp.Middleware(
			recovery.Recovery(),
		),
	}
	if c.Http.Timeout != nil {
		opts = append(opts, khttp.Timeout(c.Http.Timeout.AsDuration()))
	}
	srv := khttp.NewServer(opts...)
	v1.RegisterGreeterHTTPServer(srv, greeter)
	return srv
}
