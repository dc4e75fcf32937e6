//go:build linux

// Package kubetest runs a real single-node Kubernetes v1.37.2 cluster for
// tests: etcd, kube-apiserver, kube-controller-manager, kube-scheduler,
// containerd (Debian's, with runc and the bridge CNI plugin), the kubelet
// and kube-proxy in iptables mode, all in a network namespace of their own.
// Start brings it up and waits for the node to be Ready; the test's
// Cleanup tears it down and leaves nothing behind: no process, mount,
// cgroup, network namespace, iptables rule or changed kernel setting.
//
// The Kubernetes commands come from $DRAINKIT_KUBE_DIR or scripts/kube.sh,
// etcd from $DRAINKIT_ETCD_BIN or scripts/etcd.sh (internal/toolbin's rules:
// outside CI a test skips while they are not built). It needs root, and
// containerd, runc, ctr, iptables, nsenter, ip and the CNI plugins
// (apt-get install containerd runc containernetworking-plugins iptables).
//
// Addresses: the node is NodeIP, pods get PodCIDR, Services ServiceCIDR,
// all private to the namespace; nothing is routed out of it. Images are
// imported from static binaries (ImportImage) and run with
// imagePullPolicy: Never.
//
// One cluster at a time per machine: the kubelet's cgroups, its sysctls and
// some of its paths are host-wide, so Start takes a lock that a second
// Start (from another test process) waits for.
package kubetest

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/toolbin"
)

// EnvKubeDir names the directory with the Kubernetes commands (what
// scripts/kube.sh prints).
const EnvKubeDir = "DRAINKIT_KUBE_DIR"

// EnvEtcdBin names the etcd binary (what scripts/etcd.sh prints).
const EnvEtcdBin = "DRAINKIT_ETCD_BIN"

// StartTimeout bounds each step of Start: a component coming up, the node
// becoming Ready.
const StartTimeout = 3 * time.Minute

// stopGrace is how long teardown waits after SIGTERM to a component before
// SIGKILL.
const stopGrace = 10 * time.Second

// hostTools are the programs the cluster needs from the host, and the
// Debian package of each.
var hostTools = map[string]string{
	"containerd": "containerd", "ctr": "containerd", "runc": "runc",
	"iptables": "iptables", "nsenter": "util-linux", "ip": "iproute2",
	cniBinDir + "/bridge": "containernetworking-plugins",
}

// Cluster is a running cluster. Its methods are safe for concurrent use.
type Cluster struct {
	// Kubeconfig is the path of a cluster-admin kubeconfig; use it with
	// Kubectl (the apiserver is reachable only inside the namespace).
	Kubeconfig string
	// Timings are how long the steps of Start took, in order.
	Timings []Timing

	kubeDir        string
	dir            string // everything the cluster writes, but what hostPaths lists
	containerdSock string
	statePath      string // see stateFile
	ns             *netns
	pki            *pki
	host           *hostState
	http           *http.Client // as cluster-admin, dialing inside the namespace
	procs          []*proc      // in start order
}

// Timing is how long one step of Start took.
type Timing struct {
	Step string
	Took time.Duration
}

// proc is a running component.
type proc struct {
	name   string
	cmd    *exec.Cmd
	exited <-chan struct{}
	log    string
}

// Start brings a cluster up for t and registers its teardown with
// t.Cleanup. When it returns, the node is Ready and namespace default takes
// pods (its service account exists). It first finishes the teardown of a
// cluster whose test process was killed (see stateFile). It skips or fails
// t as internal/toolbin says when a binary, a host tool or root is missing,
// and fails t if a step does not complete within StartTimeout.
func Start(t testing.TB) *Cluster {
	t.Helper()
	if os.Geteuid() != 0 {
		toolbin.Missing(t, "kubetest: root is needed (network namespaces, mounts, cgroups)")
	}
	for tool, pkg := range hostTools {
		if _, err := exec.LookPath(tool); err != nil {
			toolbin.Missing(t, fmt.Sprintf("kubetest: %s not found (apt-get install %s)", tool, pkg))
		}
	}
	kubeDir := toolbin.Require(t, "kubetest", EnvKubeDir, "kube.sh")
	etcd := toolbin.Require(t, "kubetest", EnvEtcdBin, "etcd.sh")
	unlock, err := lockMachine(filepath.Join(filepath.Dir(kubeDir), "kubetest.lock"))
	if err != nil {
		t.Fatal(err)
	}
	statePath := filepath.Join(filepath.Dir(kubeDir), "kubetest.state.json")
	if err := recoverStale(t, statePath); err != nil {
		unlock()
		t.Fatal(err)
	}
	// A short directory: containerd's socket path must fit in 108 bytes.
	dir, err := os.MkdirTemp("", "kubetest")
	if err != nil {
		unlock()
		t.Fatal(err)
	}
	c := &Cluster{kubeDir: kubeDir, dir: dir, containerdSock: filepath.Join(dir, "containerd.sock"), statePath: statePath}
	t.Cleanup(func() {
		defer unlock()
		if err := c.teardown(t); err != nil {
			t.Errorf("kubetest: teardown: %v", err)
		}
	})
	if err := c.start(t, etcd); err != nil {
		t.Fatalf("kubetest: %v (logs in %s)", err, dir)
	}
	return c
}

func (c *Cluster) path(name string) string { return filepath.Join(c.dir, name) }

// timed runs step and records how long it took.
func (c *Cluster) timed(name string, step func() error) error {
	start := time.Now()
	err := step()
	c.Timings = append(c.Timings, Timing{name, time.Since(start)})
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func (c *Cluster) start(t testing.TB, etcd string) error {
	var err error
	if c.host, err = saveHost(); err != nil {
		return err
	}
	c.ns = netnsOf(os.Getpid())
	if err := c.saveState(); err != nil {
		return err
	}
	steps := []struct {
		name string
		run  func() error
	}{
		{"network namespace", c.ns.create},
		{"certificates and configuration", c.prepare},
		{"etcd", func() error { return c.startEtcd(etcd) }},
		{"containerd", c.startContainerd},
		{"pause image", func() error { return c.ImportImage(pauseImage, filepath.Join(c.kubeDir, "pause")) }},
		{"kube-apiserver", c.startAPIServer},
		{"controllers, scheduler, kube-proxy, kubelet", c.startNode},
		{"node Ready, default service account", c.waitNodeReady},
	}
	for _, s := range steps {
		if err := c.timed(s.name, s.run); err != nil {
			return err
		}
	}
	for _, tm := range c.Timings {
		t.Logf("kubetest: %s: %s", tm.Step, tm.Took.Round(time.Millisecond))
	}
	return nil
}

// prepare writes the certificates, kubeconfigs and configuration files and
// makes the admin HTTP client.
func (c *Cluster) prepare() error {
	if err := os.MkdirAll(c.path("pki"), 0o700); err != nil {
		return err
	}
	p, err := newPKI(c.path("pki"))
	if err != nil {
		return err
	}
	c.pki = p
	issues := []struct {
		name, cn string
		orgs     []string
		ips, dns []string
	}{
		{"apiserver", "kube-apiserver", nil, []string{NodeIP, apiServiceIP, "127.0.0.1"},
			[]string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"}},
		{"kubelet", "system:node:" + NodeName, []string{"system:nodes"}, []string{NodeIP}, []string{NodeName}},
		{"admin", "kubetest-admin", []string{"system:masters"}, nil, nil},
		{"apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"}, nil, nil},
		{"kube-controller-manager", "system:kube-controller-manager", nil, nil, nil},
		{"kube-scheduler", "system:kube-scheduler", nil, nil, nil},
		{"kube-proxy", "system:kube-proxy", nil, nil, nil},
	}
	for _, i := range issues {
		if err := p.issue(i.name, i.cn, i.orgs, i.ips, i.dns); err != nil {
			return err
		}
	}
	// The kubelet's client identity is its serving certificate's: CN
	// system:node:<name>, group system:nodes (the Node authorizer).
	for _, name := range []string{"admin", "kube-controller-manager", "kube-scheduler", "kube-proxy", "kubelet"} {
		if _, err := p.kubeconfig(name); err != nil {
			return err
		}
	}
	c.Kubeconfig = p.path("admin.kubeconfig")
	if err := p.serviceAccountKeys(); err != nil {
		return err
	}
	if err := c.writeConfigs(); err != nil {
		return err
	}
	cert, err := tls.LoadX509KeyPair(p.path("admin.crt"), p.path("admin.key"))
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	roots.AddCert(p.caCert)
	c.http = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext:     c.ns.DialContext,
		TLSClientConfig: &tls.Config{Certificates: []tls.Certificate{cert}, RootCAs: roots},
	}}
	return nil
}

// DialContext dials addr (a pod IP, a Service's ClusterIP, NodeIP) from
// inside the cluster's network namespace, as a process on the node would:
// the dialer for an http.Transport or a gRPC client of the test.
func (c *Cluster) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return c.ns.DialContext(ctx, network, addr)
}

// launch starts a component in the namespace with its output in
// <dir>/<name>.log.
func (c *Cluster) launch(name, bin string, args ...string) (*proc, error) {
	p := &proc{name: name, cmd: c.ns.command(bin, args...), log: c.path(name + ".log")}
	exited, err := toolbin.Launch(p.cmd, p.log, "kubetest")
	if err != nil {
		return nil, err
	}
	p.exited = exited
	c.procs = append(c.procs, p)
	return p, nil
}

// waitHTTP waits until GET url (from inside the namespace, as admin)
// answers 200.
func (c *Cluster) waitHTTP(p *proc, url string) error {
	return toolbin.WaitUp(p.exited, StartTimeout, "kubetest: "+p.name, p.log, func(ctx context.Context) error {
		return c.get(ctx, url, nil)
	})
}

// get GETs url from inside the namespace as admin and decodes a JSON body
// into v unless v is nil.
func (c *Cluster) get(ctx context.Context, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var body bytes.Buffer
	_, _ = body.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s: %.200s", url, resp.Status, body.String())
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(body.Bytes(), v)
}

func (c *Cluster) startEtcd(bin string) error {
	url := "http://127.0.0.1:" + strconv.Itoa(etcdPort)
	peer := "http://127.0.0.1:" + strconv.Itoa(etcdPeerPort)
	p, err := c.launch("etcd", bin, "--name", "kubetest", "--data-dir", c.path("etcd"),
		"--listen-client-urls", url, "--advertise-client-urls", url,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "kubetest="+peer, "--log-level", "warn",
		"--unsafe-no-fsync") // test data; a busy shared disk would slow every write
	if err != nil {
		return err
	}
	return c.waitHTTP(p, url+"/health")
}

func (c *Cluster) startContainerd() error {
	p, err := c.launch("containerd", "containerd", "--config", c.path("containerd.toml"))
	if err != nil {
		return err
	}
	return toolbin.WaitUp(p.exited, StartTimeout, "kubetest: containerd", p.log, func(ctx context.Context) error {
		return exec.CommandContext(ctx, "ctr", "--address", c.containerdSock, "version").Run()
	})
}

func (c *Cluster) startAPIServer() error {
	pk := c.pki.path
	p, err := c.launch("kube-apiserver", filepath.Join(c.kubeDir, "kube-apiserver"),
		"--etcd-servers", "http://127.0.0.1:"+strconv.Itoa(etcdPort),
		"--advertise-address", NodeIP,
		"--bind-address", NodeIP,
		"--secure-port", strconv.Itoa(apiPort),
		"--service-cluster-ip-range", ServiceCIDR,
		"--tls-cert-file", pk("apiserver.crt"), "--tls-private-key-file", pk("apiserver.key"),
		"--client-ca-file", pk("ca.crt"),
		"--kubelet-client-certificate", pk("apiserver-kubelet-client.crt"),
		"--kubelet-client-key", pk("apiserver-kubelet-client.key"),
		"--kubelet-certificate-authority", pk("ca.crt"),
		// The node's name is not in any DNS the namespace can reach.
		"--kubelet-preferred-address-types", "InternalIP",
		"--service-account-key-file", pk("sa.pub"),
		"--service-account-signing-key-file", pk("sa.key"),
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--authorization-mode", "Node,RBAC",
		"--allow-privileged",
		"--cert-dir", c.path("apiserver-certs"),
	)
	if err != nil {
		return err
	}
	return c.waitHTTP(p, fmt.Sprintf("https://%s:%d/readyz", NodeIP, apiPort))
}

// startNode starts the controller manager, the scheduler, kube-proxy and
// the kubelet; waitNodeReady waits for the result.
func (c *Cluster) startNode() error {
	pk := c.pki.path
	bin := func(name string) string { return filepath.Join(c.kubeDir, name) }
	starts := []struct {
		name string
		args []string
	}{
		{"kube-controller-manager", []string{
			"--kubeconfig", pk("kube-controller-manager.kubeconfig"),
			"--use-service-account-credentials",
			"--service-account-private-key-file", pk("sa.key"),
			"--root-ca-file", pk("ca.crt"),
			"--leader-elect=false", "--bind-address", "127.0.0.1",
			"--cert-dir", c.path("controller-manager-certs"),
		}},
		{"kube-scheduler", []string{
			"--kubeconfig", pk("kube-scheduler.kubeconfig"),
			"--leader-elect=false", "--bind-address", "127.0.0.1",
			"--cert-dir", c.path("scheduler-certs"),
		}},
		{"kube-proxy", []string{"--config", c.path("kube-proxy.yaml")}},
		{"kubelet", []string{
			"--config", c.path("kubelet.yaml"),
			"--kubeconfig", pk("kubelet.kubeconfig"),
			"--root-dir", c.path("kubelet"),
			"--hostname-override", NodeName,
			"--node-ip", NodeIP,
		}},
	}
	for _, s := range starts {
		if _, err := c.launch(s.name, bin(s.name), s.args...); err != nil {
			return err
		}
	}
	return nil
}

// nodeStatus is the part of a Node the harness reads.
type nodeStatus struct {
	Status struct {
		Conditions []struct {
			Type, Status, Reason, Message string
		}
	}
}

// NodeReady returns nil if the node's Ready condition is True, else an
// error with the condition.
func (c *Cluster) NodeReady(ctx context.Context) error {
	var n nodeStatus
	if err := c.get(ctx, fmt.Sprintf("https://%s:%d/api/v1/nodes/%s", NodeIP, apiPort, NodeName), &n); err != nil {
		return err
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == "Ready" {
			if cond.Status == "True" {
				return nil
			}
			return fmt.Errorf("node %s Ready=%s: %s: %s", NodeName, cond.Status, cond.Reason, cond.Message)
		}
	}
	return fmt.Errorf("node %s has no Ready condition yet", NodeName)
}

func (c *Cluster) waitNodeReady() error {
	kubelet := c.procs[len(c.procs)-1]
	return toolbin.WaitUp(kubelet.exited, StartTimeout, "kubetest: node", kubelet.log, func(ctx context.Context) error {
		for _, p := range c.procs {
			select {
			case <-p.exited:
				return fmt.Errorf("%s exited; see %s", p.name, p.log)
			default:
			}
		}
		if err := c.NodeReady(ctx); err != nil {
			return err
		}
		// Pods are refused until the controller manager has made the
		// namespace's default service account.
		return c.get(ctx, fmt.Sprintf("https://%s:%d/api/v1/namespaces/default/serviceaccounts/default", NodeIP, apiPort), nil)
	})
}

// ImportImage packs the static binary bin into an image named ref (see
// WriteImage) and imports it into the cluster's containerd, where pods
// with imagePullPolicy: Never find it.
func (c *Cluster) ImportImage(ref, bin string) error {
	return c.ImportImageConfig(ref, bin, ImageConfig{})
}

// Kubectl runs kubectl as cluster-admin inside the namespace with stdin
// (may be nil) and returns its standard output; the error carries its
// standard error.
func (c *Cluster) Kubectl(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	cmd := c.ns.command(filepath.Join(c.kubeDir, "kubectl"), append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("kubectl %v: %w: %s", args, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}

// lockMachine takes the machine-wide lock of the cluster, waiting for
// another process's cluster to be torn down.
func lockMachine(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("kubetest: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("kubetest: lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil
}
