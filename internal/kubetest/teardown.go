//go:build linux

package kubetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/toolbin"
)

// teardown stops the cluster and undoes everything Start did to the host,
// then checks that nothing is left: it returns what could not be undone.
// It runs even when Start failed half-way.
func (c *Cluster) teardown(t testing.TB) error {
	start := time.Now()
	var errs []error
	if c.http != nil && c.running("kubelet") && c.running("kube-apiserver") {
		// Pods deleted while the kubelet runs are stopped by it: their
		// containers get SIGTERM and their grace period, and their
		// sandboxes' networks are torn down through CNI.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		_, _ = c.Kubectl(ctx, nil, "delete", "deployments,replicasets,statefulsets,daemonsets,jobs", "--all", "--all-namespaces", "--wait=false")
		if _, err := c.Kubectl(ctx, nil, "delete", "pods", "--all", "--all-namespaces", "--timeout=90s"); err != nil {
			t.Logf("kubetest: teardown: deleting the pods: %v", err)
		}
		cancel()
	}
	for _, p := range slices.Backward(c.procs) {
		stop(p)
		if t.Failed() {
			toolbin.LogTail(t, p.log, "kubetest: "+p.name+" log")
		}
	}
	if c.http != nil {
		c.http.CloseIdleConnections()
	}
	// Whatever outlived its parent: containers the kubelet did not stop,
	// containerd's shims (their -address names c.dir).
	errs = append(errs, killCgroup(15*time.Second))
	if left := killMentioning(c.dir, 10*time.Second); len(left) > 0 {
		errs = append(errs, fmt.Errorf("processes still running: %q", left))
	}
	if c.host != nil {
		for _, ns := range c.host.newPodNetns() {
			errs = append(errs, unmountUnder(ns), os.Remove(ns))
		}
	}
	errs = append(errs, unmountUnder(c.dir, "/var/lib/kubelet"))
	if c.ns != nil {
		errs = append(errs, c.ns.delete())
	}
	errs = append(errs, removeCgroups())
	if c.host != nil {
		errs = append(errs, c.host.restoreSysctls())
		for _, p := range c.host.Absent {
			errs = append(errs, unmountUnder(p))
			if len(mountsUnder(p)) == 0 {
				errs = append(errs, os.RemoveAll(p))
			}
		}
	}
	// RemoveAll would descend into a mount still there: only when none is.
	// A failed test keeps the logs and configuration files (not the
	// images, containers and data) for a look.
	if m := mountsUnder(c.dir); len(m) > 0 {
		errs = append(errs, fmt.Errorf("mounts left under %s: %q", c.dir, m))
	} else if t.Failed() {
		t.Logf("kubetest: logs and configuration kept in %s", c.dir)
		entries, _ := os.ReadDir(c.dir)
		for _, e := range entries {
			if e.IsDir() && e.Name() != "pki" && e.Name() != "cni" {
				errs = append(errs, os.RemoveAll(filepath.Join(c.dir, e.Name())))
			}
		}
	} else {
		errs = append(errs, os.RemoveAll(c.dir))
	}
	errs = append(errs, c.leftBehind())
	t.Logf("kubetest: teardown: %s", time.Since(start).Round(time.Millisecond))
	err := errors.Join(errs...)
	if err == nil && c.statePath != "" {
		// Kept otherwise: the next Start tries again with the saved state.
		err = os.Remove(c.statePath)
	}
	return err
}

// leftBehind checks that the host is as Start found it.
func (c *Cluster) leftBehind() error {
	var errs []error
	if p := processesMentioning(c.dir); len(p) > 0 {
		errs = append(errs, fmt.Errorf("processes left: %q", p))
	}
	if c.host != nil {
		if m := c.host.newMounts(); len(m) > 0 {
			errs = append(errs, fmt.Errorf("mounts left: %q", m))
		}
	}
	if d := cgroupDirs(); len(d) > 0 {
		errs = append(errs, fmt.Errorf("cgroups left: %q", d))
	}
	if c.ns != nil {
		if _, err := os.Stat(c.ns.path); err == nil {
			errs = append(errs, fmt.Errorf("network namespace left: %s", c.ns.path))
		}
	}
	if c.host != nil {
		if n, err := kubeRules(); err != nil || n > c.host.Rules {
			errs = append(errs, fmt.Errorf("the host's iptables name KUBE- chains %d times (%d before the cluster), error %v", n, c.host.Rules, err))
		}
		if s := c.host.changedSysctls(); len(s) > 0 {
			errs = append(errs, fmt.Errorf("sysctls changed: %q", s))
		}
		for _, p := range c.host.Absent {
			if _, err := os.Lstat(p); err == nil {
				errs = append(errs, fmt.Errorf("path left: %s", p))
			}
		}
	}
	return errors.Join(errs...)
}

// running reports whether the component name was started and has not
// exited.
func (c *Cluster) running(name string) bool {
	for _, p := range c.procs {
		if p.name == name {
			select {
			case <-p.exited:
				return false
			default:
				return true
			}
		}
	}
	return false
}

// stop sends SIGTERM to p and SIGKILL after stopGrace, and waits for it.
func stop(p *proc) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return
	case <-time.After(stopGrace):
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}
