// Package server holds the layout's transport providers. kratos-layout
// lists them in ProviderSet, wire.NewSet(NewGRPCServer, NewHTTPServer),
// unchanged under drainkit; this example calls them from its hand-written
// wire_gen.go instead, so that wire need not be a dependency.
package server
