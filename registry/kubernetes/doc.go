// Package kubernetes is a registry.Source of a Kubernetes Service's
// endpoints, read from its EndpointSlices (discovery.k8s.io/v1) with
// client-go's list-and-watch machinery: what kube-proxy reads, delivered to
// drainkit's consumers (consumer.Watcher, consumer.Transport,
// consumer/grpcresolver) so that they pick pods themselves, with failover,
// outlier ejection and zone-aware picking, instead of going through a
// ClusterIP. For gRPC, a headless Service (clusterIP: None) is the usual
// choice; the source reads any Service's slices alike.
//
//	cfg, err := rest.InClusterConfig()
//	...
//	client, err := k8s.NewForConfig(cfg) // k8s.io/client-go/kubernetes
//	...
//	w, err := consumer.NewWatcher(consumer.WatcherOptions{Service: "orders",
//		Source: kubernetes.NewSource(client, "shop", "orders", kubernetes.WatchOptions{})})
//
// Watch has the rules: every slice of the Service merged, addresses
// deduplicated, the ready endpoints in rotation and, when none is ready,
// the serving terminating ones (KEP-1669), zones and topology-aware routing
// hints for consumer.Zones, revisions from resourceVersion with a new epoch
// when a relist goes backwards.
//
// It is its own Go module, github.com/drainkit/drainkit/registry/kubernetes,
// and the only drainkit package that imports client-go: a program that does
// not import it does not pay for it. There is no registrar: on Kubernetes
// the kubelet's readiness probe (drainkit's /servingz) and the pod's
// termination are the registration, and the EndpointSlice controller
// publishes them. Its tests run on a real single-node cluster (the nested
// module internal/clustertest, `make kube`).
package kubernetes
