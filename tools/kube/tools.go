//go:build tools

// Package tools pins the Kubernetes v1.37.2 commands that drainkit's
// single-node test cluster runs (kube-apiserver, kube-controller-manager,
// kube-scheduler, kubelet, kube-proxy and kubectl). scripts/kube.sh builds
// them.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
