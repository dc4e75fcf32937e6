//go:build linux

package kubetest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// kubeletSysctls are the host-wide kernel settings the kubelet sets at
// start (pkg/kubelet/cm's setupKernelTunables: overcommit always, panic on
// oops and reboot 10 s after a panic, ...). They are not per network
// namespace, so the harness saves them before the kubelet starts and puts
// them back at teardown.
var kubeletSysctls = []string{
	"vm/overcommit_memory",
	"vm/panic_on_oom",
	"kernel/panic",
	"kernel/panic_on_oops",
	"kernel/keys/root_maxkeys",
	"kernel/keys/root_maxbytes",
}

// hostPaths are the host directories the cluster's parts write to whatever
// their configuration says: the kubelet's device-plugin and pod-resources
// sockets (/var/lib/kubelet), its links to container logs
// (/var/log/containers), containerd's shim sockets (/run/containerd) and
// the pods' network namespaces (/run/netns/cni-*, under /run/netns, which
// `ip netns add` creates and mounts). Those absent at Start are removed at
// teardown; those present are left alone.
var hostPaths = []string{
	"/var/lib/kubelet",
	"/var/log/containers",
	"/var/log/pods",
	"/run/containerd",
	"/var/lib/cni",
	"/run/kubernetes",
	"/run/netns",
}

// cgroupName is the kubelet's cgroup for pods under each v1 hierarchy (its
// default cgroupRoot "/" with cgroupsPerQOS).
const cgroupName = "kubepods"

// hostState is what the host looked like before the cluster started: what
// teardown restores. Its fields are exported for the state file (see
// stateFile).
type hostState struct {
	Sysctls map[string]string // path under /proc/sys -> value
	Absent  []string          // hostPaths that did not exist
	Netns   map[string]bool   // entries of /run/netns
	Rules   int               // the host's iptables and ip6tables lines naming a KUBE- chain
	// Mounts are the mount points under mountPaths (deepest first), which
	// leftBehind compares with those at teardown.
	Mounts []string `json:",omitempty"`
}

// mountPaths are the host directories under which the cluster's parts
// mount (the kubelet's volumes, containerd's shim sockets, the pods'
// network namespaces). /run/netns itself is left out: `ip netns add` makes
// it a mount point of its own when it is not one, which stays, harmless,
// when /run/netns was there before (teardown removes it when it was not).
var mountPaths = []string{"/var/lib/kubelet", "/run/containerd", "/run/netns"}

// newMounts lists the mount points under mountPaths that were not there at
// Start (each mount point as often as it is mounted more often than then).
func (h *hostState) newMounts() []string {
	before := map[string]int{}
	for _, m := range h.Mounts {
		before[m]++
	}
	var out []string
	for _, m := range mountsUnder(mountPaths...) {
		if m == "/run/netns" {
			continue
		}
		if before[m] > 0 {
			before[m]--
			continue
		}
		out = append(out, m)
	}
	return out
}

func saveHost() (*hostState, error) {
	h := &hostState{Sysctls: map[string]string{}, Netns: map[string]bool{}}
	for _, s := range kubeletSysctls {
		b, err := os.ReadFile("/proc/sys/" + s)
		if err != nil {
			return nil, err
		}
		h.Sysctls[s] = strings.TrimSpace(string(b))
	}
	for _, p := range hostPaths {
		if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
			h.Absent = append(h.Absent, p)
		}
	}
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		h.Netns[e.Name()] = true
	}
	h.Mounts = slices.DeleteFunc(mountsUnder(mountPaths...), func(m string) bool { return m == "/run/netns" })
	var err error
	h.Rules, err = kubeRules()
	return h, err
}

// kubeRules counts the lines of the host's iptables-save and ip6tables-save
// that name one of kube-proxy's and the kubelet's chains (KUBE-...): there
// should be none of the cluster's, whose rules live in its namespace.
func kubeRules() (int, error) {
	n := 0
	for _, save := range []string{"iptables-save", "ip6tables-save"} {
		out, err := exec.Command(save).Output()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", save, err)
		}
		n += bytes.Count(out, []byte("KUBE-"))
	}
	return n, nil
}

// restoreSysctls writes back every saved setting that differs.
func (h *hostState) restoreSysctls() error {
	var errs []error
	for s, want := range h.Sysctls {
		b, err := os.ReadFile("/proc/sys/" + s)
		if err == nil && strings.TrimSpace(string(b)) == want {
			continue
		}
		if err := os.WriteFile("/proc/sys/"+s, []byte(want), 0o644); err != nil {
			errs = append(errs, fmt.Errorf("restore sysctl %s=%s: %w", s, want, err))
		}
	}
	return errors.Join(errs...)
}

// changedSysctls lists the saved settings whose value differs now.
func (h *hostState) changedSysctls() []string {
	var out []string
	for s, want := range h.Sysctls {
		b, _ := os.ReadFile("/proc/sys/" + s)
		if got := strings.TrimSpace(string(b)); got != want {
			out = append(out, fmt.Sprintf("%s=%s (was %s)", s, got, want))
		}
	}
	sort.Strings(out)
	return out
}

// newPodNetns lists the pod network namespaces containerd made (entries of
// /run/netns that were not there at Start).
func (h *hostState) newPodNetns() []string {
	var out []string
	entries, _ := os.ReadDir("/run/netns")
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "cni-") && !h.Netns[e.Name()] {
			out = append(out, filepath.Join("/run/netns", e.Name()))
		}
	}
	return out
}

// killMentioning SIGKILLs every process whose command line mentions dir
// (the cluster's components, containerd's shims, which take its socket
// path as -address) and waits up to timeout for them to be gone. It
// returns those still there.
func killMentioning(dir string, timeout time.Duration) []string {
	deadline := time.Now().Add(timeout)
	for {
		pids := processesMentioning(dir)
		if len(pids) == 0 || time.Now().After(deadline) {
			return pids
		}
		for _, p := range pids {
			pid, _ := strconv.Atoi(strings.Fields(p)[0])
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond) // a poll with a deadline: the kernel reports no exit of a non-child
	}
}

// processesMentioning lists "<pid> <command line>" of the processes whose
// command line contains dir.
func processesMentioning(dir string) []string {
	var out []string
	self := os.Getpid()
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(dir)) {
			continue
		}
		out = append(out, e.Name()+" "+string(bytes.ReplaceAll(bytes.TrimRight(b, "\x00"), []byte{0}, []byte{' '})))
	}
	return out
}

// killCgroup SIGKILLs the processes in the pods' cgroups (the containers,
// when the kubelet did not stop them) until none is left or timeout passes.
func killCgroup(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var pids []int
		for _, dir := range cgroupDirs() {
			b, _ := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			for _, f := range strings.Fields(string(b)) {
				if pid, err := strconv.Atoi(f); err == nil {
					pids = append(pids, pid)
				}
			}
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("processes %v still in the %s cgroups after %s", pids, cgroupName, timeout)
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cgroupDirs lists every directory of the pods' cgroup tree in every
// hierarchy under /sys/fs/cgroup, deepest first (the order to remove them).
func cgroupDirs() []string {
	var dirs []string
	roots, _ := filepath.Glob("/sys/fs/cgroup/*/" + cgroupName)
	for _, root := range roots {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, p)
			}
			return nil
		})
	}
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	return dirs
}

// removeCgroups removes the pods' cgroup tree from every hierarchy.
func removeCgroups() error {
	var errs []error
	for _, d := range cgroupDirs() {
		if err := syscall.Rmdir(d); err != nil && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("rmdir %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// unmountUnder detaches every mount at or under one of the prefixes,
// deepest first, and returns those it could not.
func unmountUnder(prefixes ...string) error {
	var errs []error
	for _, m := range mountsUnder(prefixes...) {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", m, err))
		}
	}
	return errors.Join(errs...)
}

// mountsUnder lists the mount points at or under one of the prefixes,
// deepest first (a mount point listed twice, stacked mounts, appears
// twice).
func mountsUnder(prefixes ...string) []string {
	b, _ := os.ReadFile("/proc/self/mountinfo")
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescapeMount(f[4])
		for _, p := range prefixes {
			if mp == p || strings.HasPrefix(mp, strings.TrimSuffix(p, "/")+"/") {
				out = append(out, mp)
				break
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
