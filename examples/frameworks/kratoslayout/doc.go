// Package kratoslayout is docs/frameworks.md's "kratos-layout with wire"
// recipe as a program: a project laid out as `kratos new` generates it
// (api, cmd/server, internal/conf, data, service, server), whose providers
// are written as wire calls them and whose cmd/server/wire_gen.go is wired
// by hand (wire itself is not a dependency). The generated packages it
// needs (conf from conf.proto, the helloworld v1 API) are stand-ins of the
// same names; the recipe's code is in cmd/server/main.go and
// internal/server, quoted by the doc (readme_test.go checks the quotes).
package kratoslayout
