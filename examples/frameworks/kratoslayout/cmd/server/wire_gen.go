package main

import (
	"github.com/go-kratos/kratos/v2/log"

	"github.com/drainkit/drainkit/examples/frameworks/kratoslayout/internal/conf"
	"github.com/drainkit/drainkit/examples/frameworks/kratoslayout/internal/data"
	"github.com/drainkit/drainkit/examples/frameworks/kratoslayout/internal/server"
	"github.com/drainkit/drainkit/examples/frameworks/kratoslayout/internal/service"
)

// wireApp is what wire generates from the layout's wire.go injector,
//
//	func wireApp(*conf.Server, *conf.Data, log.Logger) (*app, func(), error) {
//		panic(wire.Build(server.ProviderSet, data.ProviderSet, biz.ProviderSet, service.ProviderSet, newApp))
//	}
//
// written here by hand (the example has no biz layer, and wire is no
// dependency): the providers called in dependency order, the data layer's
// cleanup returned.
func wireApp(confServer *conf.Server, confData *conf.Data, logger log.Logger) (*app, func(), error) {
	dataData, cleanup, err := data.NewData(confData, logger)
	if err != nil {
		return nil, nil, err
	}
	greeterService := service.NewGreeterService(dataData)
	grpcFactory := server.NewGRPCServer(confServer, greeterService, logger)
	httpServer := server.NewHTTPServer(confServer, greeterService, logger)
	mainApp := newApp(confServer, grpcFactory, httpServer)
	return mainApp, func() {
		cleanup()
	}, nil
}
