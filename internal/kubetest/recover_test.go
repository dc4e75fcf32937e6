//go:build linux

package kubetest_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/kubetest"
)

// envHelper makes TestKilledRunHelper start a cluster and wait to be killed.
const envHelper = "KUBETEST_KILLED_RUN_HELPER"

// TestKilledRunHelper is the test process that TestStartRecoversKilledRun
// kills with SIGKILL once its cluster is up; it is skipped otherwise.
func TestKilledRunHelper(t *testing.T) {
	if os.Getenv(envHelper) == "" {
		t.Skip("run by TestStartRecoversKilledRun")
	}
	kubetest.Start(t)
	os.Stdout.WriteString("kubetest-helper: up\n")
	select {} // until killed
}

// A test process killed with its cluster up (SIGKILL: no cleanup runs)
// leaves the kubelet's sysctls changed and its namespace, mounts and
// cgroups; the next Start tears that down first, and in the end the host's
// settings are the ones from before the killed run.
func TestStartRecoversKilledRun(t *testing.T) {
	sysctls := []string{"vm/overcommit_memory", "kernel/panic", "kernel/panic_on_oops"}
	before := readSysctls(t, sysctls)
	// Checked after Start's teardown (cleanups run last-registered first).
	t.Cleanup(func() {
		if after := readSysctls(t, sysctls); strings.Join(after, " ") != strings.Join(before, " ") {
			t.Errorf("sysctls %v after the recovered run and the new one's teardown, want %v", after, before)
		}
		if m, _ := filepath.Glob("/run/netns/drainkit-kube-*"); len(m) > 0 {
			t.Errorf("network namespaces left: %v", m)
		}
	})
	helper := exec.Command(os.Args[0], "-test.run=^TestKilledRunHelper$", "-test.v")
	helper.Env = append(os.Environ(), envHelper+"=1")
	out, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	helper.Stderr = helper.Stdout
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	up := make(chan bool, 1)
	var lines []string
	go func() {
		s := bufio.NewScanner(out)
		for s.Scan() {
			lines = append(lines, s.Text())
			if s.Text() == "kubetest-helper: up" {
				up <- true
				return
			}
		}
		up <- false
	}()
	select {
	case ok := <-up:
		if !ok {
			_ = helper.Wait()
			t.Fatalf("the helper ended before its cluster was up:\n%s", strings.Join(lines, "\n"))
		}
	case <-time.After(kubetest.StartTimeout + time.Minute):
		_ = helper.Process.Kill()
		_ = helper.Wait()
		t.Fatalf("the helper's cluster not up within %s:\n%s", kubetest.StartTimeout+time.Minute, strings.Join(lines, "\n"))
	}
	if err := helper.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	killed := readSysctls(t, sysctls)
	if strings.Join(killed, " ") == strings.Join(before, " ") {
		t.Logf("the kubelet's sysctls were already %v before the run: this test checks only the namespace and mounts", before)
	}
	if m, _ := filepath.Glob("/run/netns/drainkit-kube-*"); len(m) == 0 {
		t.Fatal("the killed run left no network namespace: nothing to recover")
	}
	c := kubetest.Start(t)
	if err := c.NodeReady(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func readSysctls(t *testing.T, names []string) []string {
	t.Helper()
	var out []string
	for _, n := range names {
		b, err := os.ReadFile("/proc/sys/" + n)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n+"="+strings.TrimSpace(string(b)))
	}
	return out
}
