//go:build linux

package kubetest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// The cluster's private addresses. They exist only inside the cluster's
// network namespace: the host side of the veth pair has no address and the
// host does not forward, so no packet to or from them leaves the namespace.
const (
	// NodeIP is the node's address (kube-apiserver, kubelet), on the
	// namespace's end of the veth pair.
	NodeIP = "10.200.0.2"
	// nodeCIDR is NodeIP's subnet.
	nodeCIDR = "10.200.0.2/24"
	// PodCIDR is the range the bridge CNI plugin assigns pod IPs from.
	PodCIDR = "10.200.1.0/24"
	// ServiceCIDR is the range of ClusterIPs, routed to the veth so that
	// locally sent packets to a Service reach kube-proxy's rules.
	ServiceCIDR = "10.200.2.0/24"
	// apiServiceIP is the first address of ServiceCIDR: the "kubernetes"
	// Service, which the apiserver's certificate names.
	apiServiceIP = "10.200.2.1"
)

// netns is a network namespace made with `ip netns add` and a veth pair
// whose namespace end holds NodeIP.
type netns struct {
	name string // e.g. "drainkit-kube-1234"
	path string // /run/netns/<name>, for nsenter --net=
	host string // the host end of the veth pair (no address)
}

// netnsOf names the namespace and the veth pair of the cluster of the
// process pid.
func netnsOf(pid int) *netns {
	n := &netns{name: fmt.Sprintf("drainkit-kube-%d", pid), host: fmt.Sprintf("dkk%dh", pid)}
	n.path = "/run/netns/" + n.name
	return n
}

// create creates the namespace, with loopback up, the veth pair and the
// route of ServiceCIDR. On error it deletes what it made.
func (n *netns) create() (err error) {
	peer := strings.TrimSuffix(n.host, "h") + "n"
	if err := run("ip", "netns", "add", n.name); err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = n.delete()
		}
	}()
	for _, s := range [][]string{
		{"ip", "link", "add", n.host, "type", "veth", "peer", "name", peer},
		{"ip", "link", "set", peer, "netns", n.name},
	} {
		if err := run(s[0], s[1:]...); err != nil {
			return err
		}
	}
	// The host end never forwards what the namespace sends it (a packet
	// to a ClusterIP without kube-proxy's rule yet), whatever the host's
	// own ip_forward, and has no IPv6 address: nothing from the namespace
	// reaches another interface. These settings go with the interface.
	for _, s := range []string{"ipv4/conf/" + n.host + "/forwarding", "ipv6/conf/" + n.host + "/disable_ipv6"} {
		v := "0"
		if strings.HasPrefix(s, "ipv6") {
			v = "1"
		}
		if err := os.WriteFile("/proc/sys/net/"+s, []byte(v), 0o644); err != nil {
			return err
		}
	}
	steps := [][]string{
		{"ip", "link", "set", n.host, "up"},
		{"ip", "-n", n.name, "link", "set", "lo", "up"},
		{"ip", "-n", n.name, "addr", "add", nodeCIDR, "dev", peer},
		{"ip", "-n", n.name, "link", "set", peer, "up"},
		{"ip", "-n", n.name, "route", "add", ServiceCIDR, "dev", peer},
	}
	for _, s := range steps {
		if err := run(s[0], s[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// delete removes the namespace and with it the veth pair, the bridge and
// every iptables rule made inside it.
// A namespace that was never made (or is gone) is no error.
func (n *netns) delete() error {
	_ = run("ip", "link", "del", n.host) // gone with the namespace if it was moved
	if _, err := os.Stat(n.path); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return run("ip", "netns", "del", n.name)
}

// command returns cmd run in the namespace. nsenter --net execs name in
// place (its PID is the command's), and unlike `ip netns exec` it keeps
// the host's mounts, so the kubelet sees /sys/fs/cgroup as it is.
func (n *netns) command(name string, args ...string) *exec.Cmd {
	return exec.Command("nsenter", append([]string{"--net=" + n.path, "--", name}, args...)...)
}

// DialContext dials addr from inside the namespace: the socket is made on
// an OS thread switched into the namespace and belongs to it from then on.
func (n *netns) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// The thread stays locked, and so dies with this goroutine, unless
		// it is back in the host's namespace.
		back, err := setns(n.path, "/proc/self/ns/net")
		if err != nil {
			ch <- result{err: err}
			return
		}
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err := back(); err != nil {
			if c != nil {
				c.Close()
			}
			ch <- result{err: err}
			return
		}
		runtime.UnlockOSThread()
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

// setns switches the calling thread into the network namespace at path and
// returns the function that switches it back to the one at self.
func setns(path, self string) (back func() error, err error) {
	orig, err := os.Open(self)
	if err != nil {
		return nil, err
	}
	target, err := os.Open(path)
	if err != nil {
		orig.Close()
		return nil, err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		orig.Close()
		return nil, fmt.Errorf("setns %s: %w", path, err)
	}
	return func() error {
		defer orig.Close()
		if err := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("setns back to the host's network namespace: %w", err)
		}
		return nil
	}, nil
}

// run runs a host command, returning an error with its output.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
