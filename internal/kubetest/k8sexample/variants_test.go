//go:build linux

package k8sexample_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A worker pod: the shipped manifest with a program that has no service
// listener (internal/workerservice, a workdrain.Worker on drainkit.Main,
// built by the Dockerfile's recipe) in place of the example's, its http
// port dropped and the preStop hook naming its binary. It becomes ready on
// the admin listener's probes alone; deleted, its preStop hook drains it:
// the unit of work running finishes, nothing is cut, exit 0 within the
// grace period.
func testWorkerPod(t *testing.T, s *site) {
	cfg := s.recipe.image
	cfg.Path, cfg.Entrypoint = "/worker", []string{"/worker"}
	if err := s.c.ImportImageConfig("drainkit-worker:test", s.bins.worker, cfg); err != nil {
		t.Fatal(err)
	}
	d := s.deployment()
	d["metadata"] = map[string]any{"name": "worker", "labels": map[string]any{"app": "worker"}}
	spec := d["spec"].(map[string]any)
	spec["selector"] = map[string]any{"matchLabels": map[string]any{"app": "worker"}}
	spec["template"].(map[string]any)["metadata"] = map[string]any{"labels": map[string]any{"app": "worker"}}
	c := d.container()
	c["name"], c["image"] = "worker", "drainkit-worker:test"
	c["ports"] = without(c["ports"], "http")
	// It registers nowhere, so the registered address is no setting it
	// takes (a program without a registrar refuses it, exit 2).
	c["env"] = without(c["env"], "DRAINKIT_REGISTRY_ADDRESS")
	c["lifecycle"] = map[string]any{"preStop": map[string]any{"exec": map[string]any{"command": []string{"/worker", "prestop"}}}}
	s.apply(d)
	t.Cleanup(func() {
		_, _ = s.c.Kubectl(context.Background(), nil, "delete", "deployment", "worker", "--wait=false")
	})
	s.rollout("worker")

	name, _ := s.anyReadyPod("worker")
	s.keep(name)
	logs := s.followLogs(name)
	tgps := int(d.podSpec()["terminationGracePeriodSeconds"].(float64))
	s.kubectl(nil, "delete", "pod", name, "--wait=false")
	p := s.waitTerminated(name, time.Duration(tgps+10)*time.Second)
	term := p.Status.ContainerStatuses[0].State.Terminated
	out := logs()
	done := logLine(out, "drainkit: drain complete")
	if term.ExitCode != 0 || done == nil {
		t.Fatalf("worker exit %d (%s), want 0 after a complete drain:\n%s", term.ExitCode, term.Reason, out)
	}
	tl, _ := done["timeline"].(map[string]any)
	if !strings.Contains(fmt.Sprint(tl["reason"]), "preStop") || tl["force_closed_count"] != float64(0) || logLine(out, "worker: unit cut") != nil {
		t.Errorf("worker drain: reason %q (want the preStop hook's), force_closed %v, want 0 and no unit cut:\n%s", tl["reason"], tl["force_closed_count"], out)
	}
	if logLine(out, "worker: unit done") == nil {
		t.Errorf("the worker did no work:\n%s", out)
	}
	t.Logf("worker drain: reason %q, window_ended %vms, idle %vms, exit 0", tl["reason"], tl["window_ended_ms"], tl["idle_ms"])
}

// The Nacos variant of the manifest (cmd/drainkit's
// TestKubernetesManifestNacosSDKDir): a service that wires registry/nacos
// (registry/nacos/internal/nacosservice, built by the recipe as the image's
// /httpservice) with the shipped manifest, plus NACOS_SERVER_ADDR, which
// turns its registration on (the server is unreachable from the pod: the
// registrar retries and the start does not wait for it). On the read-only
// root file system nacos-sdk-go's directory must be on the manifest's
// emptyDir (XDG_CACHE_HOME=/cache): the pods become ready and the SDK's
// files are on the volume. Without XDG_CACHE_HOME the same pod exits 2
// naming registry.nacos.sdk_dir, which the test also asserts (the check
// can fail).
func testNacosVariant(t *testing.T, s *site) {
	_, _ = s.c.Kubectl(s.ctx, nil, "delete", "deployment", "httpservice", "--wait=true", "--timeout=60s")
	const image = "drainkit-example:nacos"
	if err := s.c.ImportImageConfig(image, s.bins.nacos, s.recipe.image); err != nil {
		t.Fatal(err)
	}
	variant := func(cacheHome bool) object {
		d := s.deployment()
		c := d.container()
		c["image"] = image
		env := c["env"]
		if !cacheHome {
			env = without(env, "XDG_CACHE_HOME")
		}
		c["env"] = append(env.([]any), map[string]any{"name": "NACOS_SERVER_ADDR", "value": "127.0.0.1:8848"})
		return d
	}
	t.Cleanup(func() {
		_, _ = s.c.Kubectl(context.Background(), nil, "delete", "deployment", "httpservice", "--wait=false")
	})
	s.apply(variant(true))
	s.rollout("httpservice")
	name, _ := s.anyReadyPod("httpservice")
	logs := s.kubectl(nil, "logs", "pod/"+name)
	if strings.Contains(logs, "registry.nacos.sdk_dir") {
		t.Errorf("the Nacos variant names registry.nacos.sdk_dir:\n%s", logs)
	}
	// The SDK's directory, seen from the host through the container's
	// root: on the volume.
	id := strings.TrimPrefix(s.pod(name).Status.ContainerStatuses[0].ContainerID, "containerd://")
	pid := taskPID(t, s, id)
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/root/cache/drainkit/nacos", pid))
	if err != nil || len(entries) == 0 {
		t.Errorf("nacos-sdk-go's directory on the cache volume: %v, %d entries", err, len(entries))
	}

	// Without XDG_CACHE_HOME: the new ReplicaSet's pod exits 2 (the
	// rollout keeps the ready old pods: maxUnavailable 0).
	s.apply(variant(false))
	deadline := time.Now().Add(2 * time.Minute)
	for {
		var list struct{ Items []pod }
		if err := s.c.GetJSON(s.ctx, "/api/v1/namespaces/default/pods?labelSelector=app%3Dhttpservice", &list); err != nil {
			t.Fatal(err)
		}
		var failed string
		for _, p := range list.Items {
			for _, cs := range p.Status.ContainerStatuses {
				for _, st := range []containerState{cs.State, cs.LastState} {
					if st.Terminated != nil && st.Terminated.ExitCode == 2 {
						failed = p.Metadata.Name
					}
				}
			}
		}
		if failed != "" {
			prev, _ := s.c.Kubectl(s.ctx, nil, "logs", "--previous", "pod/"+failed)
			if cur, _ := s.c.Kubectl(s.ctx, nil, "logs", "pod/"+failed); !strings.Contains(string(prev)+string(cur), "registry.nacos.sdk_dir") {
				t.Errorf("exit 2 without naming registry.nacos.sdk_dir:\n%s%s", prev, cur)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("without XDG_CACHE_HOME no pod exited 2 within 2m: the manifest's cache volume is not what makes the Nacos variant start")
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// taskPID is the host PID of the container id's first process (ctr tasks
// ls: TASK PID STATUS).
func taskPID(t *testing.T, s *site, id string) int {
	t.Helper()
	out, err := s.c.Ctr(s.ctx, "tasks", "ls")
	if err != nil {
		t.Fatalf("ctr tasks ls: %v: %s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == id {
			pid, err := strconv.Atoi(f[1])
			if err == nil {
				return pid
			}
		}
	}
	t.Fatalf("container %s not in ctr tasks ls:\n%s", id, out)
	return 0
}

// without returns the list of named entries (ports, env) without the one
// named name.
func without(list any, name string) any {
	var out []any
	for _, e := range list.([]any) {
		if e.(map[string]any)["name"] != name {
			out = append(out, e)
		}
	}
	return out
}
