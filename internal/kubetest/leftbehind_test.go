//go:build linux

package kubetest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/drainkit/drainkit/internal/toolbin"
)

// The check that ends every cluster's teardown reports what a cluster
// could leave on the host: planted here one of each (a process naming the
// cluster's directory, a mount under /var/lib/kubelet, a host iptables
// chain named KUBE-, a kubelet sysctl changed), each is named in its
// error, and with all of them removed it passes. The mount is planted with
// /run/netns already there and no pod network namespace left, the case
// the check used to let through.
func TestLeftBehindReportsLeftovers(t *testing.T) {
	if os.Geteuid() != 0 {
		toolbin.Missing(t, "kubetest: root is needed (mounts, iptables, sysctls)")
	}
	for _, tool := range []string{"iptables", "iptables-save", "ip6tables-save"} {
		if _, err := exec.LookPath(tool); err != nil {
			toolbin.Missing(t, "kubetest: "+tool+" not found (apt-get install iptables)")
		}
	}
	kubeDir := toolbin.Require(t, "kubetest", EnvKubeDir, "kube.sh")
	// No cluster may start meanwhile: the plants are on the host.
	unlock, err := lockMachine(filepath.Join(filepath.Dir(kubeDir), "kubetest.lock"))
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	for _, p := range []string{"/run/netns", "/var/lib/kubelet"} {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(p)
		}
	}
	dir := t.TempDir()
	host, err := saveHost()
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{dir: dir, host: host}
	if err := c.leftBehind(); err != nil {
		t.Fatalf("nothing planted yet: %v", err)
	}

	// A process whose command line names the cluster's directory, as a
	// component's or a shim's does.
	proc := exec.Command("sleep", "600")
	proc.Args[0] = filepath.Join(dir, "kubelet")
	if err := proc.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = proc.Process.Kill(); _ = proc.Wait() }()

	// A mount where the kubelet mounts a pod's volumes.
	mnt, err := os.MkdirTemp("/var/lib/kubelet", "kubetest-plant-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(mnt)
	if err := syscall.Mount("tmpfs", mnt, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Unmount(mnt, syscall.MNT_DETACH) }()

	// An empty chain in the host's filter table: nothing jumps to it.
	const chain = "KUBE-KUBETEST-PLANT"
	if err := run("iptables", "-w", "-N", chain); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = run("iptables", "-w", "-X", chain) }()

	// One of the kubelet's sysctls changed (vm.overcommit_memory, which
	// every kubelet start sets to 1) and put back at the end.
	const sysctl = "vm/overcommit_memory"
	was := host.Sysctls[sysctl]
	other := "1"
	if was == "1" {
		other = "0"
	}
	if err := os.WriteFile("/proc/sys/"+sysctl, []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := os.WriteFile("/proc/sys/"+sysctl, []byte(was), 0o644); err != nil {
			t.Errorf("restoring %s=%s: %v", sysctl, was, err)
		}
	}()

	err = c.leftBehind()
	if err == nil {
		t.Fatal("leftBehind found nothing")
	}
	for _, want := range []string{"processes left", dir, "mounts left", mnt, "KUBE- chains", "sysctls changed", fmt.Sprintf("%s=%s (was %s)", sysctl, other, was)} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("leftBehind's error lacks %q: %v", want, err)
		}
	}

	// Each removed, the check passes again.
	_ = proc.Process.Kill()
	_ = proc.Wait()
	if err := syscall.Unmount(mnt, 0); err != nil {
		t.Fatal(err)
	}
	if err := run("iptables", "-w", "-X", chain); err != nil {
		t.Fatal(err)
	}
	if err := host.restoreSysctls(); err != nil {
		t.Fatal(err)
	}
	if err := c.leftBehind(); err != nil {
		t.Errorf("everything removed: %v", err)
	}
}
