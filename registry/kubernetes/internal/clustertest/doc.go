// Package clustertest holds the tests of registry/kubernetes that run on a
// real single-node Kubernetes cluster (internal/kubetest): Services with
// pods scaled up and down, pods terminating, a Service with two
// EndpointSlices, a relist after a broken watch, a consumer.Watcher and
// consumer.Transport fed by the source, and the gRPC resolver
// (consumer/grpcresolver) fed by it on a headless Service through a
// rolling restart. It is a module of its own outside
// go.work (see its go.mod); run it as root with `make kube`, or
//
//	DRAINKIT_KUBE_DIR="$(./scripts/kube.sh)" DRAINKIT_ETCD_BIN="$(./scripts/etcd.sh)" \
//		GOWORK=off go -C registry/kubernetes/internal/clustertest test -race ./...
package clustertest
