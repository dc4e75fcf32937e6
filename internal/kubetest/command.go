//go:build linux

package kubetest

import (
	"os/exec"
	"path/filepath"
)

// Command returns the command name run inside the cluster's network
// namespace, as a process on the node: it reaches the apiserver at NodeIP,
// pod IPs and ClusterIPs, and sees kube-proxy's iptables rules. Give it
// KubectlPath and Kubeconfig to drive the cluster with kubectl.
func (c *Cluster) Command(name string, args ...string) *exec.Cmd {
	return c.ns.command(name, args...)
}

// KubectlPath is the kubectl binary of the cluster's Kubernetes build.
func (c *Cluster) KubectlPath() string {
	return filepath.Join(c.kubeDir, "kubectl")
}
