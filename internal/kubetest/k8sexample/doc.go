// Package k8sexample holds the tests of the shipped examples/kubernetes on
// a real single-node cluster (internal/kubetest): deployment.yaml applied
// unchanged with an image built by the Dockerfile's recipe, its kubelet
// drain, the KEP-1669 fallback, a second SIGTERM, a grace period too
// short, a worker pod and the Nacos variant. It has no code of its own.
package k8sexample
