package probes_test

import (
	"net/http"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/probes"
)

// windowTimings: a propagation window of at least 2s, long enough to read
// the probes inside it on a busy machine.
func windowTimings() budget.Timings {
	t := testTimings()
	t.PropagationMin, t.PropagationMax = 2*time.Second, 3*time.Second
	return t
}

// pollCode polls GET path until it answers want, failing after 5s.
func (hs *harness) pollCode(t *testing.T, path string, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := hs.code(t, http.MethodGet, path)
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %d, want %d within 5s", path, got, want)
		}
		time.Sleep(5 * time.Millisecond) // poll with a deadline
	}
}

// TestServingzDuringKubeletDrain: during a drain the preStop hook started
// (POST /drain?wait=propagation), /readyz fails at once (registries, the
// drill's consumers) while /servingz, the Kubernetes readiness probe, keeps
// passing through the propagation window, so the terminating pod stays
// "serving" for kube-proxy's fallback; once the listeners have closed it
// fails too, although the drain still waits for in-flight work.
func TestServingzDuringKubeletDrain(t *testing.T) {
	hs := newHarness(t, probes.Options{}, lifecycle.Options{Timings: windowTimings()})
	if c := hs.code(t, http.MethodGet, "/servingz"); c != http.StatusServiceUnavailable {
		t.Errorf("STARTING: /servingz %d", c)
	}
	hs.run(t)
	if c := hs.code(t, http.MethodGet, "/servingz"); c != http.StatusOK {
		t.Errorf("READY: /servingz %d", c)
	}
	hook := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, hs.srv.URL+"/drain?wait=propagation&reason=preStop", nil)
		resp, err := hs.srv.Client().Do(req)
		if err != nil {
			hook <- 0
			return
		}
		resp.Body.Close()
		hook <- resp.StatusCode
	}()
	waitState(t, hs.lc, lifecycle.Draining)
	if c := hs.code(t, http.MethodGet, "/readyz"); c != http.StatusServiceUnavailable {
		t.Errorf("DRAINING: /readyz %d, want 503", c)
	}
	c, _, body := hs.do(t, http.MethodGet, "/servingz?verbose", nil)
	if c != http.StatusOK {
		t.Errorf("DRAINING in the window: /servingz %d, want 200:\n%s", c, body)
	}
	mustContain(t, body, "[+]draining ok: terminating, listeners open")
	<-hs.window.ended
	hs.pollCode(t, "/servingz", http.StatusServiceUnavailable)
	if st := hs.lc.State(); st != lifecycle.Draining {
		t.Errorf("state %s: the gate's request should hold the drain", st)
	}
	if tl, _ := hs.lc.Timeline(); !hasStep(tl, lifecycle.StepListenersClosed) {
		t.Errorf("/servingz failed before the listeners closed: %+v", tl.Steps)
	}
	if code := <-hook; code != http.StatusOK {
		t.Errorf("preStop call: %d", code)
	}
}

// TestServingzSignalDrain: SIGTERM (here the harness's SIGUSR2) is the
// kubelet too: /servingz passes in the window.
func TestServingzSignalDrain(t *testing.T) {
	hs := newHarness(t, probes.Options{}, lifecycle.Options{Timings: windowTimings()})
	hs.run(t)
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	waitState(t, hs.lc, lifecycle.Draining)
	if c := hs.code(t, http.MethodGet, "/servingz"); c != http.StatusOK {
		t.Errorf("signal drain in the window: /servingz %d, want 200", c)
	}
}

// TestServingzOperatorDrainFails: a drain an operator started without the
// hook (POST /drain) fails /servingz at once, like /readyz: the pod is not
// terminating, so a passing probe would keep it ready in the Service.
func TestServingzOperatorDrainFails(t *testing.T) {
	hs := newHarness(t, probes.Options{}, lifecycle.Options{Timings: windowTimings()})
	hs.run(t)
	if c, _, body := hs.do(t, http.MethodPost, "/drain", nil); c != http.StatusAccepted {
		t.Fatalf("POST /drain: %d %s", c, body)
	}
	c, _, body := hs.do(t, http.MethodGet, "/servingz", nil)
	if c != http.StatusServiceUnavailable {
		t.Errorf("operator drain: /servingz %d, want 503", c)
	}
	mustContain(t, body, "drain not started by the kubelet")
}

// TestServingzFailsDrainingOption: with ServingzFailsDraining
// (admin.servingz_draining: false) even the preStop hook's drain fails
// /servingz at once.
func TestServingzFailsDrainingOption(t *testing.T) {
	hs := newHarness(t, probes.Options{ServingzFailsDraining: true}, lifecycle.Options{Timings: windowTimings()})
	hs.run(t)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, hs.srv.URL+"/drain?wait=propagation", nil)
		if resp, err := hs.srv.Client().Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	waitState(t, hs.lc, lifecycle.Draining)
	if c := hs.code(t, http.MethodGet, "/servingz"); c != http.StatusServiceUnavailable {
		t.Errorf("ServingzFailsDraining: /servingz %d, want 503", c)
	}
}

func hasStep(tl lifecycle.Timeline, name string) bool {
	_, ok := tl.Offset(name)
	return ok
}
