// Package kratoswatch is kratos's etcd discovery, reproduced for drainkit's
// tests: the module proxy refuses
// github.com/go-kratos/kratos/contrib/registry/etcd/v2 (403), so its
// Discovery (GetService, Watch) is rebuilt here from that module's source
// (registry.go and watcher.go, the version that builds against kratos
// v2.8.3) over kratos v2.8.3's own types (registry.ServiceInstance,
// registry.Discovery, registry.Watcher), with its behaviour kept: instances
// are read from <namespace>/<name> (no trailing '/') with one prefixed Get,
// values are JSON ServiceInstances, and those whose Name differs are
// dropped; a watch is a keys-only prefixed watch from the current revision,
// and every batch of events makes Next read everything again.
//
// It is a nested module, so that drainkit's own go.mod never requires
// kratos; its test runs examples/grpcservice as a real child process
// against a real etcd. Run it with GOWORK=off when a go.work above does not
// list it:
//
//	cd registry/etcd/internal/kratoswatch && GOWORK=off go test -race ./...
package kratoswatch
