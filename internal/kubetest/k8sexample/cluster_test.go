//go:build linux

package k8sexample_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/kubetest"
)

// site is one cluster with the shipped manifest applied, and what the
// tests need to drive it.
type site struct {
	t        *testing.T
	c        *kubetest.Cluster
	ctx      context.Context
	manifest []byte // deployment.yaml, as shipped
	node     *http.Client
	recipe   recipe
	bins     binaries
}

// binaries are the programs the tests run, built before the cluster
// starts: the service, the worker and the Nacos variant by the
// Dockerfile's recipe, and the drainkit CLI.
type binaries struct {
	service, worker, nacos, drainkit string
}

func (s *site) kubectl(stdin []byte, args ...string) string {
	s.t.Helper()
	out, err := s.c.Kubectl(s.ctx, stdin, args...)
	if err != nil {
		s.t.Fatal(err)
	}
	return string(out)
}

// pod is the part of a Pod the tests read.
type pod struct {
	Metadata struct {
		Name              string
		DeletionTimestamp *time.Time
	}
	Spec struct {
		TerminationGracePeriodSeconds int
	}
	Status struct {
		PodIP             string
		ContainerStatuses []struct {
			ContainerID  string
			Ready        bool
			RestartCount int
			State        containerState
			LastState    containerState
		}
	}
}

type containerState struct {
	Terminated *struct {
		ExitCode   int
		Reason     string
		FinishedAt time.Time
	}
}

func (s *site) pod(name string) pod {
	s.t.Helper()
	var p pod
	if err := s.c.GetJSON(s.ctx, "/api/v1/namespaces/default/pods/"+name, &p); err != nil {
		s.t.Fatal(err)
	}
	return p
}

// readyPods lists the names of the Ready pods labelled app=app, each with
// its IP.
func (s *site) readyPods(app string) map[string]string {
	s.t.Helper()
	var list struct{ Items []pod }
	if err := s.c.GetJSON(s.ctx, "/api/v1/namespaces/default/pods?labelSelector=app%3D"+app, &list); err != nil {
		s.t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range list.Items {
		if p.Metadata.DeletionTimestamp == nil && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].Ready {
			out[p.Metadata.Name] = p.Status.PodIP
		}
	}
	return out
}

// anyReadyPod returns the name and IP of one of the Ready pods labelled
// app=app, failing the test when there is none.
func (s *site) anyReadyPod(app string) (name, ip string) {
	s.t.Helper()
	for name, ip := range s.readyPods(app) {
		return name, ip
	}
	s.t.Fatalf("no ready pod labelled app=%s", app)
	return "", ""
}

// endpoint is one endpoint of an EndpointSlice with its conditions
// (KEP-1672: ready, serving, terminating).
type endpoint struct {
	Addresses  []string
	Conditions struct{ Ready, Serving, Terminating *bool }
}

func (e endpoint) is(ready, serving, terminating bool) bool {
	c := e.Conditions
	return c.Ready != nil && *c.Ready == ready && c.Serving != nil && *c.Serving == serving && c.Terminating != nil && *c.Terminating == terminating
}

// endpoints returns the endpoints of every slice of service, by address.
func (s *site) endpoints(service string) (map[string]endpoint, error) {
	var list struct {
		Items []struct{ Endpoints []endpoint }
	}
	if err := s.c.GetJSON(s.ctx, "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3D"+service, &list); err != nil {
		return nil, err
	}
	out := map[string]endpoint{}
	for _, sl := range list.Items {
		for _, e := range sl.Endpoints {
			for _, a := range e.Addresses {
				out[a] = e
			}
		}
	}
	return out, nil
}

// status GETs url from the node and returns the status code, 0 when the
// request failed.
func (s *site) status(url string) int {
	resp, err := s.node.Get(url)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// keep puts a finalizer on the pod so that its object, with the final
// status of its container, outlives the container; the cleanup removes it.
func (s *site) keep(name string) {
	s.t.Helper()
	s.kubectl(nil, "patch", "pod", name, "--type=merge", "-p", `{"metadata":{"finalizers":["drainkit.invalid/keep"]}}`)
	s.t.Cleanup(func() {
		// A pod still held would block the cluster's teardown.
		_, _ = s.c.Kubectl(context.Background(), nil, "patch", "pod", name, "--type=merge", "-p", `{"metadata":{"finalizers":null}}`)
	})
}

// followLogs streams the pod's log until its container exits; wait
// returns it.
func (s *site) followLogs(name string) (wait func() string) {
	var out []byte
	done := make(chan struct{})
	go func() {
		defer close(done)
		out, _ = s.c.Kubectl(s.ctx, nil, "logs", "-f", "pod/"+name)
	}()
	return func() string { <-done; return string(out) }
}

// waitTerminated polls the pod until its container has terminated and
// returns the pod.
func (s *site) waitTerminated(name string, within time.Duration) pod {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for {
		p := s.pod(name)
		if cs := p.Status.ContainerStatuses; len(cs) == 1 && cs[0].State.Terminated != nil {
			return p
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("pod %s: container not terminated within %s: %+v", name, within, p.Status)
		}
		time.Sleep(200 * time.Millisecond) // a poll with a deadline
	}
}

// logLine returns the first JSON log line whose msg is msg.
func logLine(logs, msg string) map[string]any {
	for _, l := range strings.Split(logs, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == msg {
			return m
		}
	}
	return nil
}

// manifestEnv is the container's environment in deployment.yaml, as
// NAME=value (the downward API's entries left out).
func (s *site) manifestEnv() []string {
	s.t.Helper()
	d := s.deployment()
	var env []string
	for _, e := range d.container()["env"].([]any) {
		e := e.(map[string]any)
		if v, ok := e["value"].(string); ok {
			env = append(env, e["name"].(string)+"="+v)
		}
	}
	return env
}

// object is a decoded Kubernetes object.
type object map[string]any

func (o object) podSpec() map[string]any {
	return o["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
}

func (o object) container() map[string]any {
	return o.podSpec()["containers"].([]any)[0].(map[string]any)
}

// deployment decodes the shipped manifest's Deployment (kubectl converts
// the YAML).
func (s *site) deployment() object {
	s.t.Helper()
	// One JSON object per YAML document.
	dec := json.NewDecoder(strings.NewReader(s.kubectl(s.manifest, "create", "--dry-run=client", "-o", "json", "-f", "-")))
	for dec.More() {
		var o object
		if err := dec.Decode(&o); err != nil {
			s.t.Fatal(err)
		}
		if o["kind"] == "Deployment" {
			return o
		}
	}
	s.t.Fatal("no Deployment in deployment.yaml")
	return nil
}

// apply applies the objects as JSON.
func (s *site) apply(objs ...object) {
	s.t.Helper()
	b, err := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": objs})
	if err != nil {
		s.t.Fatal(err)
	}
	s.kubectl(b, "apply", "-f", "-")
}

// The shipped examples/kubernetes, as users deploy it, on a real cluster:
// the image built by the Dockerfile's recipe (its go build, COPY, USER,
// ENV and ENTRYPOINT) from the example's static binary and imported under
// the manifest's own name, so that deployment.yaml is applied unchanged.
// The subtests share the cluster and run in order.
func TestShippedManifests(t *testing.T) {
	// The binaries first: the cluster waits for nobody.
	r := readRecipe(t)
	bins := binaries{
		service:  r.buildImage(t, ""),
		worker:   r.buildImage(t, "./internal/workerservice"),
		nacos:    r.buildImage(t, "./registry/nacos/internal/nacosservice"),
		drainkit: goBuild(t, "./cmd/drainkit", t.TempDir()),
	}
	manifest, err := os.ReadFile(filepath.Join(exampleDir, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c := kubetest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	tr := &http.Transport{DialContext: c.DialContext, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	s := &site{t: t, c: c, ctx: ctx, manifest: manifest, node: &http.Client{Transport: tr, Timeout: 2 * time.Second}, recipe: r, bins: bins}
	image := s.deployment().container()["image"].(string)
	if err := c.ImportImageConfig(image, bins.service, r.image); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	s.kubectl(manifest, "apply", "-f", "-")
	s.rollout("httpservice")
	t.Logf("deployment.yaml applied unchanged; 3 replicas ready after %s", time.Since(start).Round(time.Millisecond))

	steps := []struct {
		name string
		run  func(*testing.T, *site)
	}{
		{"KubeletDrain", testKubeletDrain},
		{"SecondSIGTERM", testSecondSIGTERM},
		{"KilledByGracePeriod", testKilledByGracePeriod},
		{"TerminatingFallback", func(t *testing.T, s *site) { testTerminatingFallback(t, s, true) }},
		{"TerminatingFallbackWithoutServingz", func(t *testing.T, s *site) { testTerminatingFallback(t, s, false) }},
		{"WorkerPod", testWorkerPod},
		{"NacosVariant", testNacosVariant},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			sub := *s
			sub.t = t
			begin := time.Now()
			st.run(t, &sub)
			t.Logf("%s: %s", st.name, time.Since(begin).Round(time.Millisecond))
		})
	}
}

// rollout waits for the Deployment's rollout (the apps label and the
// name are the same here); on a timeout it fails the test with the pods'
// description and logs.
func (s *site) rollout(name string) {
	s.t.Helper()
	if _, err := s.c.Kubectl(s.ctx, nil, "rollout", "status", "deployment/"+name, "--timeout=180s"); err != nil {
		describe, _ := s.c.Kubectl(s.ctx, nil, "describe", "pods", "-l", "app="+name)
		logs, _ := s.c.Kubectl(s.ctx, nil, "logs", "-l", "app="+name, "--tail=20", "--prefix")
		s.t.Fatalf("%v\n%s\n%s", err, describe, logs)
	}
}

// check runs `drainkit check --termination-grace-period tgps` with the
// manifest's DRAINKIT_* values and returns its exit code and output.
func (s *site) check(tgps int) (int, string) {
	s.t.Helper()
	cmd := exec.Command(s.bins.drainkit, "check", "--termination-grace-period", fmt.Sprint(tgps))
	cmd.Env = append(withoutEnv(os.Environ(), "DRAINKIT_"), s.manifestEnv()...)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		s.t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// A pod deleted with the manifest's settings: the kubelet runs the preStop
// hook (the service binary's `prestop`), which starts the drain; during it
// the pod's EndpointSlice entry is terminating and not ready but still
// serving, because the readiness probe's /servingz passes while /readyz
// fails; SIGTERM joins the drain, which completes with exit 0 within
// terminationGracePeriodSeconds, the budget `drainkit check` calls OK.
func testKubeletDrain(t *testing.T, s *site) {
	tgps := int(s.deployment().podSpec()["terminationGracePeriodSeconds"].(float64))
	if code, out := s.check(tgps); code != 0 {
		t.Fatalf("drainkit check --termination-grace-period %d with the manifest's values: exit %d, want 0 (OK):\n%s", tgps, code, out)
	}
	name, ip := s.anyReadyPod("httpservice")
	s.keep(name)
	logs := s.followLogs(name)
	deleted := time.Now()
	s.kubectl(nil, "delete", "pod", name, "--wait=false")

	// Sample the slice and both paths until the container has exited.
	var sawServing, sawPaths bool
	var lastServing time.Duration
	for {
		p := s.pod(name)
		if cs := p.Status.ContainerStatuses; len(cs) == 1 && cs[0].State.Terminated != nil {
			break
		}
		if time.Since(deleted) > time.Duration(tgps+10)*time.Second {
			t.Fatalf("pod %s still running %ds after its deletion", name, tgps+10)
		}
		eps, err := s.endpoints("httpservice")
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := eps[ip]; ok && e.is(false, true, true) {
			sawServing, lastServing = true, time.Since(deleted)
			if !sawPaths {
				ready, serving := s.status("http://"+ip+":8081/readyz"), s.status("http://"+ip+":8081/servingz")
				sawPaths = ready == http.StatusServiceUnavailable && serving == http.StatusOK
			}
		}
		time.Sleep(100 * time.Millisecond) // the sampling interval
	}
	p := s.pod(name)
	term := p.Status.ContainerStatuses[0].State.Terminated
	out := logs()
	if !sawServing {
		t.Errorf("the deleted pod's endpoint was never ready=false serving=true terminating=true: its readiness probe failed at the drain's start")
	}
	if !sawPaths {
		t.Errorf("never saw /readyz 503 and /servingz 200 on the terminating pod")
	}
	t.Logf("endpoint serving while terminating until %s after the deletion", lastServing.Round(time.Millisecond))
	if term.ExitCode != 0 {
		t.Errorf("container exit %d (%s), want 0:\n%s", term.ExitCode, term.Reason, out)
	}
	took := term.FinishedAt.Sub(p.Metadata.DeletionTimestamp.Add(-time.Duration(tgps) * time.Second))
	if took > time.Duration(tgps)*time.Second {
		t.Errorf("the container exited %s after the deletion: beyond terminationGracePeriodSeconds %d", took, tgps)
	}
	done := logLine(out, "drainkit: drain complete")
	if done == nil {
		t.Fatalf("no drain complete line:\n%s", out)
	}
	tl, _ := done["timeline"].(map[string]any)
	// The preStop hook's POST /drain started the drain, not SIGTERM.
	if reason := fmt.Sprint(tl["reason"]); !strings.Contains(reason, "preStop") {
		t.Errorf("the drain was started by %q: want the preStop hook's /drain", reason)
	}
	if w, _ := tl["window_ended_ms"].(float64); w < 5000 {
		t.Errorf("window ended at %vms: want at least the manifest's propagation.min 5s", w)
	}
	if logLine(out, "drainkit: no signal after the preStop hook; exiting") != nil {
		t.Errorf("the kubelet's SIGTERM did not reach the service after the hook:\n%s", out)
	}
	t.Logf("drain: reason %q, window_ended %vms, exit %d, deletion to exit %s", tl["reason"], tl["window_ended_ms"], term.ExitCode, took.Round(time.Second))
	s.rollout("httpservice")
}

// SIGTERM twice to a pod's service, as the runtime delivers the kubelet's
// (containerd's task kill): the first starts the drain, the second forces
// the exit at once with 128+15, and the kubelet restarts the container.
func testSecondSIGTERM(t *testing.T, s *site) {
	name, ip := s.anyReadyPod("httpservice")
	id := strings.TrimPrefix(s.pod(name).Status.ContainerStatuses[0].ContainerID, "containerd://")
	kill := func() {
		if out, err := s.c.Ctr(s.ctx, "tasks", "kill", "--signal", "SIGTERM", id); err != nil {
			t.Fatalf("ctr tasks kill: %v: %s", err, out)
		}
	}
	kill()
	// The first signal's drain: /readyz fails at once.
	deadline := time.Now().Add(10 * time.Second)
	for s.status("http://"+ip+":8081/readyz") != http.StatusServiceUnavailable {
		if time.Now().After(deadline) {
			t.Fatal("/readyz still not 503 10s after the first SIGTERM")
		}
		time.Sleep(50 * time.Millisecond)
	}
	sent := time.Now()
	kill()
	for {
		cs := s.pod(name).Status.ContainerStatuses[0]
		if term := cs.LastState.Terminated; cs.RestartCount > 0 && term != nil {
			if term.ExitCode != 128+15 {
				t.Errorf("exit %d after the second SIGTERM, want 143", term.ExitCode)
			}
			// Within the propagation window (5s min): not the drain's end.
			if d := term.FinishedAt.Sub(sent.Truncate(time.Second)); d > 3*time.Second {
				t.Errorf("exited %s after the second SIGTERM: want at once", d)
			}
			break
		}
		if time.Since(sent) > 30*time.Second {
			t.Fatalf("no restart 30s after the second SIGTERM: %+v", cs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	prev := s.kubectl(nil, "logs", "--previous", "pod/"+name)
	if l := logLine(prev, "drainkit: second signal, forcing exit"); l == nil || l["exit_code"] != float64(143) {
		t.Errorf("no second-signal line with exit_code 143 in the previous container's log:\n%s", prev)
	}
	s.rollout("httpservice")
	deadline = time.Now().Add(2 * time.Minute)
	for len(s.readyPods("httpservice")) < 3 {
		if time.Now().After(deadline) {
			t.Fatal("the restarted pod not ready again within 2m")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// A grace period shorter than the drain (`kubectl delete --grace-period
// 1`, which overrides the manifest's): `drainkit check` calls it FAIL, and
// the kubelet kills the container (SIGKILL, exit 137) while the preStop
// hook still waits out the propagation window. The kubelet gives the
// container at least 2 s after a hook that used up the grace period
// (SIGTERM, then SIGKILL), so the kill comes about 3 s after the deletion,
// 2 s before the window's 5 s end; with 3 s it would come at 5 s, a race
// with the drain's own end (measured both ways).
func testKilledByGracePeriod(t *testing.T, s *site) {
	const grace = 1
	if code, out := s.check(grace); code != 1 {
		t.Errorf("drainkit check --termination-grace-period %d: exit %d, want 1 (FAIL):\n%s", grace, code, out)
	}
	name, _ := s.anyReadyPod("httpservice")
	s.keep(name)
	logs := s.followLogs(name)
	deleted := time.Now()
	s.kubectl(nil, "delete", "pod", name, "--wait=false", fmt.Sprintf("--grace-period=%d", grace))
	p := s.waitTerminated(name, 30*time.Second)
	term := p.Status.ContainerStatuses[0].State.Terminated
	out := logs()
	if term.ExitCode != 128+9 {
		t.Errorf("container exit %d (%s) with a %ds grace period: want 137 (SIGKILL)\n%s", term.ExitCode, term.Reason, grace, out)
	}
	if logLine(out, "drainkit: drain complete") != nil {
		t.Errorf("the drain completed within a %ds grace period:\n%s", grace, out)
	}
	t.Logf("killed: exit %d, %s after the deletion", term.ExitCode, term.FinishedAt.Sub(deleted.Truncate(time.Second)).Round(time.Second))
	s.rollout("httpservice")
}

// KEP-1669: the Deployment scaled to zero while a client on the node sends
// requests through the Service (kube-proxy's rules). Every endpoint is then
// terminating and none is ready, so kube-proxy falls back to the serving
// ones: the pods keep answering through the propagation window because
// /servingz, the readiness probe's path, passes during a drain the kubelet
// started. With admin.servingz_draining false (servingz true runs the
// manifest as shipped) /servingz fails at once like /readyz, the endpoints
// stop serving within the probe's two failures and the fallback ends: the
// check below fails on that variant, which the test asserts.
func testTerminatingFallback(t *testing.T, s *site, servingz bool) {
	if !servingz {
		s.kubectl(nil, "set", "env", "deployment/httpservice", "DRAINKIT_ADMIN_SERVINGZ_DRAINING=false")
	}
	s.kubectl(nil, "scale", "deployment/httpservice", "--replicas=3")
	s.rollout("httpservice")
	deadline := time.Now().Add(2 * time.Minute)
	for len(s.readyPods("httpservice")) < 3 {
		if time.Now().After(deadline) {
			t.Fatal("3 pods not ready within 2m")
		}
		time.Sleep(200 * time.Millisecond)
	}
	ip := strings.TrimSpace(s.kubectl(nil, "get", "service", "httpservice", "-o", "jsonpath={.spec.clusterIP}"))

	type result struct {
		at time.Time
		ok bool
	}
	var mu sync.Mutex
	var results []result
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(20 * time.Millisecond) // 50 requests/s, each on a new connection
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			at := time.Now()
			ok := s.status("http://"+ip+"/") == http.StatusOK
			mu.Lock()
			results = append(results, result{at, ok})
			mu.Unlock()
		}
	})
	defer func() { close(stop); wg.Wait() }()
	succeeded := func(from, to time.Time) (ok, failed int) {
		mu.Lock()
		defer mu.Unlock()
		for _, r := range results {
			if !r.at.Before(from) && r.at.Before(to) {
				if r.ok {
					ok++
				} else {
					failed++
				}
			}
		}
		return ok, failed
	}
	// Warm: the Service answers before the scale, once kube-proxy has the
	// new pods (their readiness comes first), and then a second of load
	// without a failure.
	deadline = time.Now().Add(30 * time.Second)
	for ok, _ := succeeded(time.Time{}, time.Now()); ok == 0; ok, _ = succeeded(time.Time{}, time.Now()) {
		if time.Now().After(deadline) {
			t.Fatal("the Service did not answer within 30s of its pods being ready")
		}
		time.Sleep(100 * time.Millisecond)
	}
	warm := time.Now()
	time.Sleep(time.Second) // a second of load
	if ok, failed := succeeded(warm, time.Now()); ok == 0 || failed > 0 {
		t.Fatalf("before the scale: %d answered, %d failed", ok, failed)
	}
	s.kubectl(nil, "scale", "deployment/httpservice", "--replicas=0")
	// Every endpoint terminating, none ready: kube-proxy falls back to
	// those still serving (with servingz_draining false, briefly).
	var fallback time.Time
	deadline = time.Now().Add(30 * time.Second)
	for fallback.IsZero() {
		eps, err := s.endpoints("httpservice")
		if err != nil {
			t.Fatal(err)
		}
		all := len(eps) > 0
		for _, e := range eps {
			all = all && e.Conditions.Terminating != nil && *e.Conditions.Terminating && (e.Conditions.Ready == nil || !*e.Conditions.Ready)
		}
		if all {
			fallback = time.Now()
		}
		if time.Now().After(deadline) {
			t.Fatalf("the endpoints never were all terminating: %+v", eps)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The fallback must carry the traffic well past the probe's two
	// failures (2-4 s, the variant's end) and within the windows (15 s,
	// propagation.max: the requests keep them open).
	const carried = 8 * time.Second
	end := fallback.Add(carried)
	time.Sleep(time.Until(end.Add(time.Second)))
	ok, failed := succeeded(fallback, end)
	late, _ := succeeded(end, end.Add(time.Second))
	t.Logf("servingz_draining %v: all endpoints terminating; %s of requests through the Service: %d answered, %d failed; then %d answered in the next second", servingz, carried, ok, failed, late)
	if servingz {
		if failed > 0 || late == 0 {
			t.Errorf("the terminating endpoints did not carry the traffic for %s: %d failed, %d answered after it", carried, failed, late)
		}
	} else if late > 0 {
		t.Errorf("with servingz_draining false the fallback still carried traffic %s after every endpoint was terminating: the check above cannot fail", carried)
	}
	deadline = time.Now().Add(time.Minute)
	for len(s.readyPods("httpservice")) > 0 || len(s.kubectl(nil, "get", "pods", "-l", "app=httpservice", "-o", "name")) > 0 {
		if time.Now().After(deadline) {
			t.Fatal("pods still there a minute after the scale to zero")
		}
		time.Sleep(500 * time.Millisecond)
	}
}
