//go:build linux

// Package drilltest runs `drainkit drill --kubernetes` on a real cluster
// (internal/kubetest): the acceptance of issue 31's drill.
package drilltest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/kubetest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// image is the drainkit binary's image in the cluster; slicesImage the
// endpointslices load pods' (cmd/drainkit/internal/kubeslices).
const (
	image       = "drainkit.invalid/drainkit:drill"
	slicesImage = "drainkit.invalid/kubeslices:drill"
)

// result is the part of the drill's JSON (schema: kubedrill.Result) the
// test judges.
type result struct {
	RulesRead  bool   `json:"kube_proxy_rules_read"`
	Invalid    string `json:"invalid_reason"`
	Strategies []struct {
		Strategy      string `json:"strategy"`
		Load          string `json:"load"`
		Sent          int    `json:"sent"`
		Failed        int    `json:"failed"`
		DrainMinMS    int64  `json:"drain_min_ms"`
		DrainMedianMS int64  `json:"drain_median_ms"`
		DrainMaxMS    int64  `json:"drain_max_ms"`
		Pods          []struct {
			Pod           string `json:"pod"`
			DeletedMS     *int64 `json:"deleted_ms"`
			SIGTERMMS     *int64 `json:"sigterm_ms"`
			NotReadyMS    *int64 `json:"slice_ready_false_ms"`
			TerminatingMS *int64 `json:"slice_terminating_ms"`
			RulesGoneMS   *int64 `json:"kube_proxy_rules_gone_ms"`
			LastRequestMS *int64 `json:"last_request_ms"`
			ExitedMS      *int64 `json:"exited_ms"`
			DrainMS       int64  `json:"drain_ms"`
			Failed        int    `json:"failed"`
			Served        int    `json:"served"`
		} `json:"pods"`
	} `json:"strategies"`
}

// A rolling restart of 3 replicas at 200 requests/s through kube-proxy
// and, from a second load pod per strategy, 200 requests/s through
// drainkit's consumer fed by the EndpointSlices (the pod IPs, no
// ClusterIP): drainkit (preStop through the binary) loses nothing through
// either, plain Shutdown at SIGTERM loses requests through kube-proxy in
// the same run, and `preStop: sleep 5` is the baseline whose drain time is
// reported beside drainkit's: at equal zero loss drainkit's pods must be
// gone sooner. Every old pod has its four instants, and answered requests
// of both load kinds.
//
// drainkit runs with propagation.min 1s: the window then ends on the
// evidence (no request for propagation.quiet, the load pod, the one caller,
// moved), which on this cluster is kube-proxy's rules without the pod plus
// a second. Left at its default (5s, which yields only to a registrar's
// confirmed deregistration) the window is min + quiet, about sleep 5's.
func TestKubernetesDrill(t *testing.T) {
	c := kubetest.Start(t)
	bin := filepath.Join(t.TempDir(), "drainkit")
	build := exec.Command("go", "build", "-o", bin, "./cmd/drainkit")
	build.Dir = filepath.Join("..", "..", "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/drainkit: %v\n%s", err, out)
	}
	if err := c.ImportImage(image, bin); err != nil {
		t.Fatal(err)
	}
	// The endpointslices load pods' binary: a module of its own (client-go)
	// outside go.work.
	slicesBin := filepath.Join(t.TempDir(), "kubeslices")
	build = exec.Command("go", "build", "-o", slicesBin, ".")
	build.Dir = filepath.Join("..", "..", "..", "cmd", "drainkit", "internal", "kubeslices")
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/drainkit/internal/kubeslices: %v\n%s", err, out)
	}
	if err := c.ImportImage(slicesImage, slicesBin); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	drill := c.Command(bin, "drill", "--kubernetes", "--json",
		"--image", image, "--image-pull-policy", "Never",
		"--kube-load", "service,endpointslices", "--kube-slices-image", slicesImage,
		"--kubectl", c.KubectlPath(), "--kubeconfig", c.Kubeconfig,
		"--propagation-min", minWindow.String())
	cmd := exec.CommandContext(ctx, drill.Path, drill.Args[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("drill's stderr:\n%s", stderr.String())
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("drill: %v", err)
	}
	var res result
	if jerr := json.Unmarshal(stdout.Bytes(), &res); jerr != nil {
		t.Fatalf("drill (%v): its JSON: %v\n%s", err, jerr, stdout.String())
	}
	t.Logf("drill's result:\n%s", stdout.String())
	if res.Invalid != "" {
		t.Fatalf("drill INVALID: %s", res.Invalid)
	}
	if !res.RulesRead {
		t.Error("the drill did not read kube-proxy's rules, though it ran as root in the node's namespace")
	}
	// lost by strategy, then load kind.
	lost := map[string]map[string]int{}
	drainMin, drainMax := map[string]int64{}, map[string]int64{}
	for _, s := range res.Strategies {
		if lost[s.Strategy] == nil {
			lost[s.Strategy] = map[string]int{}
		}
		lost[s.Strategy][s.Load] = s.Failed
		drainMin[s.Strategy], drainMax[s.Strategy] = s.DrainMinMS, s.DrainMaxMS
		t.Logf("%s via %s: lost %d of %d, drain per pod median %d ms, max %d ms", s.Strategy, s.Load, s.Failed, s.Sent, s.DrainMedianMS, s.DrainMaxMS)
		if len(s.Pods) != 3 {
			t.Errorf("%s via %s: %d old pods, want 3", s.Strategy, s.Load, len(s.Pods))
		}
		served := 0
		for _, p := range s.Pods {
			served += p.Served
		}
		if served == 0 {
			t.Errorf("%s via %s: the old pods answered none of its %d requests", s.Strategy, s.Load, s.Sent)
		}
		for _, p := range s.Pods {
			for name, v := range map[string]*int64{"deletion": p.DeletedMS, "SIGTERM": p.SIGTERMMS, "ready=false": p.NotReadyMS,
				"terminating": p.TerminatingMS, "rules gone": p.RulesGoneMS, "last request": p.LastRequestMS, "exit": p.ExitedMS} {
				if v == nil {
					t.Errorf("%s: pod %s: no %s instant", s.Strategy, p.Pod, name)
				}
			}
		}
	}
	for _, load := range []string{"service", "endpointslices"} {
		if n, ok := lost["drainkit"][load]; !ok || n != 0 {
			t.Errorf("drainkit via %s: lost %d requests (reported: %v), want 0", load, n, ok)
		}
	}
	if lost["shutdown"]["service"] == 0 {
		t.Error("plain Shutdown at SIGTERM lost no request through kube-proxy in the same run: the drill measured nothing")
	}
	if err != nil {
		t.Errorf("drill's exit status: %v, want 0 (drainkit lost nothing)", err)
	}
	total := func(s string) (n int) {
		for _, v := range lost[s] {
			n += v
		}
		return n
	}
	if total("drainkit") == 0 && total("sleep") == 0 && drainMax["drainkit"] >= drainMin["sleep"] {
		t.Errorf("at equal zero loss drainkit drained its pods in up to %d ms, preStop sleep 5 in %d ms at least: drainkit must be sooner", drainMax["drainkit"], drainMin["sleep"])
	}
}

// minWindow is the drainkit pods' propagation.min.
const minWindow = time.Second
