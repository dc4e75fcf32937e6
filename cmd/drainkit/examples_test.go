package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/config"
	"go.yaml.in/yaml/v3"
)

const k8sDir = "../../examples/kubernetes"

type k8sProbe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
	PeriodSeconds    int `yaml:"periodSeconds"`
	FailureThreshold int `yaml:"failureThreshold"`
}

type k8sDoc struct {
	Kind string `yaml:"kind"`
	Spec struct {
		Template struct {
			Spec struct {
				TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
				Containers                    []struct {
					Image string `yaml:"image"`
					Ports []struct {
						Name          string `yaml:"name"`
						ContainerPort int    `yaml:"containerPort"`
					} `yaml:"ports"`
					Env []struct {
						Name  string `yaml:"name"`
						Value string `yaml:"value"`
					} `yaml:"env"`
					StartupProbe   k8sProbe `yaml:"startupProbe"`
					ReadinessProbe k8sProbe `yaml:"readinessProbe"`
					LivenessProbe  k8sProbe `yaml:"livenessProbe"`
					Lifecycle      struct {
						PreStop struct {
							Exec struct {
								Command []string `yaml:"command"`
							} `yaml:"exec"`
						} `yaml:"preStop"`
					} `yaml:"lifecycle"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
		Ports []struct {
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
	} `yaml:"spec"`
}

// TestKubernetesExampleIsConsistent checks the manifest against the image and
// the drain budget: the budget loads and fits terminationGracePeriodSeconds,
// the probes hit the admin listener's paths and port, the preStop hook runs
// the drainkit binary the image ships against that port, and the startup
// probe allows the whole warm-up.
func TestKubernetesExampleIsConsistent(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(k8sDir, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var deploy, svc *k8sDoc
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var d k8sDoc
		if err := dec.Decode(&d); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		switch d.Kind {
		case "Deployment":
			deploy = &d
		case "Service":
			svc = &d
		}
	}
	if deploy == nil || svc == nil || len(deploy.Spec.Template.Spec.Containers) != 1 {
		t.Fatal("want one Deployment with one container and one Service")
	}
	c := deploy.Spec.Template.Spec.Containers[0]

	// The image: distroless, exec-form entrypoint, both binaries.
	df, err := os.ReadFile(filepath.Join(k8sDir, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	froms := regexp.MustCompile(`(?m)^FROM (\S+)`).FindAllStringSubmatch(string(df), -1)
	if len(froms) < 2 || !strings.Contains(froms[len(froms)-1][1], "distroless") {
		t.Errorf("final stage %v is not distroless", froms)
	}
	m := regexp.MustCompile(`(?m)^ENTRYPOINT (\[.*\])$`).FindStringSubmatch(string(df))
	if m == nil {
		t.Fatal("no exec-form ENTRYPOINT")
	}
	var entry []string
	if err := json.Unmarshal([]byte(m[1]), &entry); err != nil {
		t.Fatalf("ENTRYPOINT is not exec form: %v", err)
	}
	if !strings.Contains(string(df), "/out/drainkit /drainkit") {
		t.Error("the image does not ship /drainkit for the preStop hook")
	}
	flag := func(name string) string {
		for i, a := range entry {
			if a == name && i+1 < len(entry) {
				return entry[i+1]
			}
		}
		return ""
	}
	portOf := func(addr string) string {
		_, p, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatalf("address %q: %v", addr, err)
		}
		return p
	}
	ports := map[string]string{}
	for _, p := range c.Ports {
		ports[p.Name] = strconv.Itoa(p.ContainerPort)
	}
	if ports["http"] != portOf(flag("--http-addr")) || ports["admin"] != portOf(flag("--admin-addr")) {
		t.Errorf("container ports %v do not match the entrypoint %v", ports, entry)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort != "http" {
		t.Errorf("the Service must expose only the http port: %+v", svc.Spec.Ports)
	}
	for want, p := range map[string]k8sProbe{"/startupz": c.StartupProbe, "/readyz": c.ReadinessProbe, "/livez": c.LivenessProbe} {
		if p.HTTPGet.Path != want || p.HTTPGet.Port != "admin" {
			t.Errorf("probe %s: %+v", want, p.HTTPGet)
		}
	}
	pre := c.Lifecycle.PreStop.Exec.Command
	if len(pre) != 4 || pre[0] != "/drainkit" || pre[1] != "prestop" || pre[2] != "--admin-addr" || portOf(pre[3]) != ports["admin"] {
		t.Errorf("preStop %v", pre)
	}

	// The budget, loaded as the service loads it.
	var env []string
	for _, e := range c.Env {
		env = append(env, e.Name+"="+e.Value)
	}
	cfg, err := config.Load(config.Sources{Env: env})
	if err != nil {
		t.Fatalf("the manifest's DRAINKIT_* values do not load: %v", err)
	}
	tgps := time.Duration(deploy.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
	var out bytes.Buffer
	if !writeBudget(&out, cfg, tgps) {
		t.Errorf("budget does not fit:\n%s", out.String())
	}
	if tgps < cfg.Timings.GracePeriod {
		t.Errorf("terminationGracePeriodSeconds %s < grace_period %s", tgps, cfg.Timings.GracePeriod)
	}
	if d := time.Duration(c.StartupProbe.PeriodSeconds*c.StartupProbe.FailureThreshold) * time.Second; d < cfg.Timings.WarmupTimeout {
		t.Errorf("the startup probe gives up after %s, before warmup.timeout %s", d, cfg.Timings.WarmupTimeout)
	}
}
