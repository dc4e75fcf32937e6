package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/childtest"
)

// TestKubernetesManifestAgainstBinary runs what deployment.yaml tells the
// kubelet to run against the real service binary (examples/httpservice, the
// image's only binary), as a child process with the manifest's environment
// (status.podIP from the downward API resolved to 127.0.0.1, the
// propagation window shortened to 1-3s): it starts with that environment
// (DRAINKIT_REGISTRY_ADDRESS is a setting this program reads), every probe
// path answers 200 once ready, and the preStop command starts the drain and
// returns when the window is over. Meanwhile /readyz (registries, the
// drill's consumers) fails from the drain's start and the readiness probe's
// path, /servingz, keeps passing until the listeners close (KEP-1669's
// serving condition), which the test measures.
func TestKubernetesManifestAgainstBinary(t *testing.T) {
	parallelDrill(t, 0)
	deploy, _, _ := readManifest(t)
	c := deploy.Spec.Template.Spec.Containers[0]
	df, err := os.ReadFile(filepath.Join(k8sDir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^ENTRYPOINT (\[.*\])$`).FindStringSubmatch(string(df))
	var entry []string
	if m == nil || json.Unmarshal([]byte(m[1]), &entry) != nil || filepath.Base(entry[0]) != "httpservice" {
		t.Fatalf("ENTRYPOINT %v: want the httpservice binary", m)
	}
	bin := httpserviceBin

	var env []string
	podIP := false
	for _, e := range c.Env {
		switch {
		case e.ValueFrom.FieldRef.FieldPath == "status.podIP":
			env = append(env, e.Name+"=127.0.0.1")
			podIP = e.Name == "DRAINKIT_REGISTRY_ADDRESS"
		case e.ValueFrom.FieldRef.FieldPath != "":
			t.Fatalf("env %s from %s: the test knows only status.podIP", e.Name, e.ValueFrom.FieldRef.FieldPath)
		default:
			env = append(env, e.Name+"="+e.Value)
		}
	}
	if !podIP {
		t.Error("the manifest does not register the pod IP: want DRAINKIT_REGISTRY_ADDRESS from fieldRef status.podIP")
	}
	// Later entries win: a shorter window than the manifest's 5-15s.
	env = append(env, "DRAINKIT_PROPAGATION_MIN=1s", "DRAINKIT_PROPAGATION_QUIET=0s", "DRAINKIT_PROPAGATION_MAX=3s")
	child := childtest.Start(t, bin, env, entry[1:]...)
	child.WaitFor(15*time.Second, "ready", func() bool { return child.Probe("/readyz") == http.StatusOK })
	for _, p := range []k8sProbe{c.StartupProbe, c.ReadinessProbe, c.LivenessProbe} {
		if code := child.Probe(p.HTTPGet.Path); code != http.StatusOK {
			t.Errorf("probe path %s: %d on a READY instance", p.HTTPGet.Path, code)
		}
	}

	pre := c.Lifecycle.PreStop.Exec.Command
	if len(pre) < 2 || pre[0] != entry[0] {
		t.Fatalf("preStop %v does not run the image's binary %s", pre, entry[0])
	}
	type sample struct {
		at               time.Duration // when the sample began, from the hook's start
		done             time.Time     // when both answers were in
		readyz, servingz int
	}
	var samples []sample
	hook := make(chan result, 1)
	start := time.Now()
	go func() {
		hook <- runBinary(t, bin, 30*time.Second, append(env, "DRAINKIT_ADMIN_ADDR="+child.Admin), pre[1:]...)
	}()
	var r result
	var hookDone time.Duration
poll:
	for {
		select {
		case r = <-hook:
			hookDone = time.Since(start)
			break poll
		default:
		}
		at := time.Since(start)
		rz, sz := child.Probe("/readyz"), child.Probe(c.ReadinessProbe.HTTPGet.Path)
		samples = append(samples, sample{at, time.Now(), rz, sz})
		time.Sleep(10 * time.Millisecond) // sampling interval
	}
	if r.code != 0 {
		t.Fatalf("preStop %v: exit %d: %s%s", pre, r.code, r.stdout, r.stderr)
	}
	// The window has ended: the listeners close now; the probe follows.
	child.WaitFor(5*time.Second, "readiness probe failing after the window", func() bool {
		code := child.Probe(c.ReadinessProbe.HTTPGet.Path)
		return code == http.StatusServiceUnavailable || code == 0
	})
	servingEnd := time.Since(start)
	child.Signal(syscall.SIGTERM) // the kubelet, once the hook returned
	if code := child.WaitExit(15 * time.Second); code != 0 {
		t.Fatalf("exit %d after the preStop hook and SIGTERM:\n%s", code, child.Logs())
	}

	// The window's end as the service recorded it: a probe answered before
	// then was answered before the listeners closed.
	lines := child.LogLines("drainkit: drain complete")
	tl, _ := lines[0]["timeline"].(map[string]any)
	t0, err := time.Parse(time.RFC3339Nano, fmt.Sprint(tl["start"]))
	win := child.TimelineStep("window_ended")
	if err != nil || !win.OK {
		t.Fatalf("no drain start or window_ended in the timeline (%v):\n%s", err, child.Logs())
	}
	windowEnd := t0.Add(win.At - 2*time.Millisecond) // the log rounds to milliseconds
	var firstNotReady time.Duration = -1
	both := 0
	for _, s := range samples {
		if s.readyz == http.StatusServiceUnavailable && firstNotReady < 0 {
			firstNotReady = s.at
		}
		if firstNotReady >= 0 && s.readyz == http.StatusOK {
			t.Errorf("/readyz 200 at %s after 503 at %s", s.at, firstNotReady)
		}
		if s.readyz == http.StatusServiceUnavailable && s.done.Before(windowEnd) {
			if s.servingz != http.StatusOK {
				t.Errorf("%s: %d at %s inside the window (it ended %s after t0)", c.ReadinessProbe.HTTPGet.Path, s.servingz, s.at, win.At)
			}
			both++
		}
	}
	if firstNotReady < 0 || both == 0 {
		t.Fatalf("no sample saw the drain (%d samples)", len(samples))
	}
	t.Logf("preStop hook: /readyz 503 from %s after the hook's exec; %s 200 for %d samples through the window, hook returned at %s, %s 503 by %s",
		firstNotReady.Round(time.Millisecond), c.ReadinessProbe.HTTPGet.Path, both, hookDone.Round(time.Millisecond),
		c.ReadinessProbe.HTTPGet.Path, servingEnd.Round(time.Millisecond))
}
