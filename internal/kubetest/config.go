//go:build linux

package kubetest

import (
	"fmt"
	"os"
	"path/filepath"
)

// Ports inside the cluster's network namespace, which is new and empty, so
// fixed ports cannot collide with anything.
const (
	apiPort      = 6443
	etcdPort     = 2379
	etcdPeerPort = 2380
)

// The images the harness imports into containerd under these names (the
// kubelet never pulls: nothing outside the machine is reachable).
const (
	// pauseImage is containerd's sandbox_image, built from the pause
	// binary that scripts/kube.sh builds.
	pauseImage = "drainkit.invalid/pause:1"
)

// NodeName is the name the kubelet registers the node under.
const NodeName = "kubetest-node"

// cniBinDir is where Debian's containernetworking-plugins installs the
// plugins.
const cniBinDir = "/usr/lib/cni"

// writeConfigs writes containerd's, the CNI plugins', the kubelet's and
// kube-proxy's configuration files into c.dir.
func (c *Cluster) writeConfigs() error {
	files := map[string]string{
		// containerd: its own root, state and sockets in c.dir; the CNI
		// configuration and the IPAM state there too. Disabled: the plugin
		// that would create /opt/containerd.
		"containerd.toml": fmt.Sprintf(`version = 2
root = %[1]q
state = %[2]q
disabled_plugins = ["io.containerd.internal.v1.opt"]
[grpc]
  address = %[3]q
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %[4]q
  # The sandbox's containers cannot lower their OOM score below containerd's.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = %[5]q
    conf_dir = %[6]q
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = %[7]q
`, c.path("containerd/root"), c.path("containerd/state"), c.containerdSock, pauseImage, cniBinDir, c.path("cni"), c.path("runc")),
		// One bridge for the pods, NodeIP's namespace as their gateway; no
		// masquerade (nothing leaves the namespace), IPAM state in c.dir.
		"cni/10-kubetest.conflist": fmt.Sprintf(`{
  "cniVersion": "1.0.0",
  "name": "kubetest",
  "plugins": [{
    "type": "bridge",
    "bridge": "kubetest0",
    "isGateway": true,
    "ipMasq": false,
    "hairpinMode": true,
    "ipam": {
      "type": "host-local",
      "ranges": [[{"subnet": %q}]],
      "routes": [{"dst": "0.0.0.0/0"}],
      "dataDir": %q
    }
  }]
}
`, PodCIDR, c.path("cni-ipam")),
		"resolv.conf": "",
		// failCgroupV1: false lets the kubelet run on cgroups v1; the
		// eviction thresholds are low so that a busy shared disk does not
		// taint the node.
		"kubelet.yaml": fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://%[1]s
address: %[2]s
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
tlsCertFile: %[3]s
tlsPrivateKeyFile: %[4]s
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: %[5]s}
authorization: {mode: AlwaysAllow}
resolvConf: %[6]s
podLogsDir: %[7]s
failSwapOn: false
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  nodefs.inodesFree: 1%%
  imagefs.available: 1%%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
`, c.containerdSock, NodeIP, c.pki.path("kubelet.crt"), c.pki.path("kubelet.key"), c.pki.path("ca.crt"), c.path("resolv.conf"), c.path("pod-logs")),
		// iptables mode; NodePorts on NodeIP only; conntrack settings
		// left as they are (0: do not set nf_conntrack_max, which is
		// host-wide).
		"kube-proxy.yaml": fmt.Sprintf(`apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
clientConnection: {kubeconfig: %s}
hostnameOverride: %s
clusterCIDR: %s
bindAddress: %s
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
nodePortAddresses: [primary]
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`, c.pki.path("kube-proxy.kubeconfig"), NodeName, PodCIDR, NodeIP),
	}
	for name, text := range files {
		p := c.path(name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}
