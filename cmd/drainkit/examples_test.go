package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/version"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
	TimeoutSeconds   int `yaml:"timeoutSeconds"`
}

type k8sSecurity struct {
	RunAsNonRoot   bool `yaml:"runAsNonRoot"`
	SeccompProfile struct {
		Type string `yaml:"type"`
	} `yaml:"seccompProfile"`
}

type k8sDoc struct {
	Kind string `yaml:"kind"`
	Spec struct {
		Replicas int `yaml:"replicas"`
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		MaxUnavailable             *int   `yaml:"maxUnavailable"`
		MinAvailable               *int   `yaml:"minAvailable"`
		UnhealthyPodEvictionPolicy string `yaml:"unhealthyPodEvictionPolicy"`
		Template                   struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec struct {
				TerminationGracePeriodSeconds int         `yaml:"terminationGracePeriodSeconds"`
				SecurityContext               k8sSecurity `yaml:"securityContext"`
				Containers                    []struct {
					SecurityContext struct {
						k8sSecurity              `yaml:",inline"`
						AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
						ReadOnlyRootFilesystem   bool  `yaml:"readOnlyRootFilesystem"`
						Capabilities             struct {
							Drop []string `yaml:"drop"`
						} `yaml:"capabilities"`
					} `yaml:"securityContext"`
					Image           string `yaml:"image"`
					ImagePullPolicy string `yaml:"imagePullPolicy"`
					Ports           []struct {
						Name          string `yaml:"name"`
						ContainerPort int    `yaml:"containerPort"`
					} `yaml:"ports"`
					Env []struct {
						Name      string `yaml:"name"`
						Value     string `yaml:"value"`
						ValueFrom struct {
							FieldRef struct {
								FieldPath string `yaml:"fieldPath"`
							} `yaml:"fieldRef"`
						} `yaml:"valueFrom"`
					} `yaml:"env"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
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
				Volumes []struct {
					Name     string    `yaml:"name"`
					EmptyDir *struct{} `yaml:"emptyDir"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
		Ports []struct {
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
	} `yaml:"spec"`
}

// TestKubernetesExampleIsConsistent checks the manifest against the image and
// the drain budget: the budget loads and fits terminationGracePeriodSeconds
// with check's slack (an OK verdict), the probes hit the admin listener's
// paths and port, the preStop hook runs the drainkit binary the image ships
// and finds the admin port the way the service does (DRAINKIT_ADMIN_ADDR, no
// overriding flag), the startup probe allows the whole warm-up, the
// readiness probe tolerates one slow probe, the builder image is new enough
// for go.mod, and the build context leaves .git out.
func TestKubernetesExampleIsConsistent(t *testing.T) {
	parallelDrill(t, 0)
	deploy, svc, pdb := readManifest(t)
	c := deploy.Spec.Template.Spec.Containers[0]
	checkRestricted(t, deploy)
	checkDisruptionBudget(t, deploy, pdb)

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
	// One binary: the service, which answers the preStop hook itself.
	if copies := regexp.MustCompile(`(?m)^COPY --from=build \S+ (\S+)$`).FindAllStringSubmatch(string(df), -1); len(copies) != 1 || copies[0][1] != entry[0] {
		t.Errorf("the image copies %v from the builder: want exactly the entrypoint's binary %s", copies, entry[0])
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
	if ports["http"] != portOf(flag("--http-addr")) {
		t.Errorf("container ports %v do not match the entrypoint %v", ports, entry)
	}
	// The admin address is a variable, in the image and the manifest, never
	// an entrypoint flag (which would override the manifest's variable).
	if slices.Contains(entry, "--admin-addr") || slices.ContainsFunc(entry, func(a string) bool { return strings.HasPrefix(a, "--admin-addr=") }) {
		t.Errorf("ENTRYPOINT %v sets --admin-addr, which overrides DRAINKIT_ADMIN_ADDR", entry)
	}
	envLine := regexp.MustCompile(`(?m)^ENV DRAINKIT_ADMIN_ADDR=(\S+)$`).FindStringSubmatch(string(df))
	if envLine == nil || portOf(envLine[1]) != ports["admin"] {
		t.Errorf("the image's DRAINKIT_ADMIN_ADDR %v does not name the admin port %s", envLine, ports["admin"])
	}
	manifestAdmin := ""
	for _, e := range c.Env {
		if e.Name == "DRAINKIT_ADMIN_ADDR" {
			manifestAdmin = e.Value
		}
	}
	if manifestAdmin == "" || portOf(manifestAdmin) != ports["admin"] {
		t.Errorf("the manifest's DRAINKIT_ADMIN_ADDR %q does not name the admin port %s", manifestAdmin, ports["admin"])
	}

	// The builder: a pinned Go release no older than go.work's go line
	// (the build goes through go.work, whose go line is at least every
	// workspace module's; GOTOOLCHAIN=local never downloads a newer one).
	gowork, err := os.ReadFile("../../go.work")
	if err != nil {
		t.Fatal(err)
	}
	goLine := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gowork)
	builder := regexp.MustCompile(`^golang:(\d+\.\d+\.\d+)`).FindStringSubmatch(froms[0][1])
	if goLine == nil || builder == nil {
		t.Fatalf("go.work go line %q, builder %q: want golang:X.Y.Z", goLine, froms[0][1])
	}
	if version.Compare("go"+builder[1], "go"+string(goLine[1])) < 0 {
		t.Errorf("builder golang:%s is older than go.work's go %s", builder[1], goLine[1])
	}
	if !strings.Contains(string(df), "go line of go.work") {
		t.Error("the Dockerfile does not say the builder must be at least the go line of go.work")
	}
	if !strings.Contains(string(df), "GOTOOLCHAIN=local") {
		t.Error("the builder may download a toolchain: set GOTOOLCHAIN=local")
	}
	ignore, err := os.ReadFile(filepath.Join(k8sDir, "Dockerfile.dockerignore"))
	if err != nil {
		t.Fatalf("no Dockerfile.dockerignore next to the Dockerfile: %v", err)
	}
	if !slices.Contains(strings.Split(string(ignore), "\n"), ".git") {
		t.Errorf("Dockerfile.dockerignore does not leave .git out:\n%s", ignore)
	}
	for _, needed := range []string{"go.work", "go.work.sum", "go.mod", "go.sum", "cmd", "examples", "lifecycle", "config", "internal", "registry", "telemetry"} {
		if slices.Contains(strings.Split(string(ignore), "\n"), needed) {
			t.Errorf("Dockerfile.dockerignore leaves out %s, which the build needs", needed)
		}
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort != "http" {
		t.Errorf("the Service must expose only the http port: %+v", svc.Spec.Ports)
	}
	for want, p := range map[string]k8sProbe{"/startupz": c.StartupProbe, "/servingz": c.ReadinessProbe, "/livez": c.LivenessProbe} {
		if p.HTTPGet.Path != want || p.HTTPGet.Port != "admin" {
			t.Errorf("probe %s: %+v", want, p.HTTPGet)
		}
	}
	pre := c.Lifecycle.PreStop.Exec.Command
	switch {
	case len(pre) == 2 && pre[0] == entry[0] && pre[1] == "prestop":
		// The service binary's own hook; reads DRAINKIT_ADMIN_ADDR, checked above.
	case len(pre) == 4 && pre[0] == entry[0] && pre[1] == "prestop" && pre[2] == "--admin-addr" && portOf(pre[3]) == ports["admin"]:
	default:
		t.Errorf("preStop %v", pre)
	}

	// A readiness probe must not flap on one slow answer.
	if rp := c.ReadinessProbe; rp.FailureThreshold < 2 || rp.TimeoutSeconds < 2 {
		t.Errorf("readiness probe: failureThreshold %d, timeoutSeconds %d: want >= 2 each (one slow probe must not take the pod out)", rp.FailureThreshold, rp.TimeoutSeconds)
	}
	if c.ImagePullPolicy != "IfNotPresent" && c.ImagePullPolicy != "Never" && strings.HasSuffix(c.Image, ":latest") && !strings.Contains(c.Image, "/") {
		t.Errorf("image %s with pull policy %q: the kubelet would try to pull a local image", c.Image, c.ImagePullPolicy)
	}
	readme, err := os.ReadFile(filepath.Join(k8sDir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	checkGoVersionProse(t, string(goLine[1]), builder[1], map[string]string{
		"Dockerfile": regexp.MustCompile(`(?m)^[^#].*$`).ReplaceAllString(string(df), ""), // its comments: the FROM line is the pin
		"README.md":  string(readme),
	})
	for _, want := range []string{"kind load docker-image " + c.Image, "35 = 30 + 5", "exit 3", "`go` line of `go.work`", "Dockerfile.dockerignore",
		"PodDisruptionBudget", "RuntimeDefault", "preStop:\n    sleep:", "native `sleep`", "adaptive"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md lacks %q", want)
		}
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
	if v := writeBudget(&out, cfg, tgps); v != verdictOK {
		t.Errorf("budget is not OK:\n%s", out.String())
	}
	if tgps < cfg.Timings.GracePeriod+PodSlack {
		t.Errorf("terminationGracePeriodSeconds %s < grace_period %s + slack %s", tgps, cfg.Timings.GracePeriod, PodSlack)
	}
	if !strings.Contains(string(readme), fmt.Sprintf("%d = %d + %d", tgps/time.Second, cfg.Timings.GracePeriod/time.Second, PodSlack/time.Second)) {
		t.Errorf("README.md does not explain terminationGracePeriodSeconds as grace_period + %s", PodSlack)
	}
	if d := time.Duration(c.StartupProbe.PeriodSeconds*c.StartupProbe.FailureThreshold) * time.Second; d < cfg.Timings.WarmupTimeout {
		t.Errorf("the startup probe gives up after %s, before warmup.timeout %s", d, cfg.Timings.WarmupTimeout)
	}
}

// goVersionProse matches a Go version stated in prose: "go 1.26.0",
// "Go 1.26", "golang:1.26.8", or a go line's version in parentheses ("the
// `go` line of `go.mod` (1.26.7)").
var goVersionProse = regexp.MustCompile("(?:\\b(?:go|Go|golang)[ :]|`?\\bgo`? line[^()\n]*?\\((?:go )?)v?(\\d+\\.\\d+(?:\\.\\d+)?)")

// checkGoVersionProse fails for a Go version in texts (name to text) that
// is neither go.work's go line (the builder's floor) nor the builder's pin:
// the example once stated three different ones (issue 33 item 7). Better
// still, the prose names the go line and the FROM line without a number.
func checkGoVersionProse(t *testing.T, workGo, pin string, texts map[string]string) {
	t.Helper()
	for name, text := range texts {
		for _, m := range goVersionProse.FindAllStringSubmatch(text, -1) {
			if m[1] != workGo && m[1] != pin {
				t.Errorf("examples/kubernetes/%s states Go version %s (%q): neither go.work's go line %s nor the builder's pin golang:%s; refer to them instead of a number",
					name, m[1], m[0], workGo, pin)
			}
		}
	}
}

// readManifest decodes deployment.yaml: one Deployment with one container,
// one Service and the PodDisruptionBudget (nil if absent).
func readManifest(t *testing.T) (deploy, svc, pdb *k8sDoc) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(k8sDir, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
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
		case "PodDisruptionBudget":
			pdb = &d
		}
	}
	if deploy == nil || svc == nil || len(deploy.Spec.Template.Spec.Containers) != 1 {
		t.Fatal("want one Deployment with one container and one Service")
	}
	return deploy, svc, pdb
}

// checkRestricted checks the restricted Pod Security Standard's settings:
// the RuntimeDefault seccomp profile, non-root, no privilege escalation, all
// capabilities dropped.
func checkRestricted(t *testing.T, deploy *k8sDoc) {
	t.Helper()
	pod := deploy.Spec.Template.Spec
	if pod.SecurityContext.SeccompProfile.Type != "RuntimeDefault" || !pod.SecurityContext.RunAsNonRoot {
		t.Errorf("pod securityContext %+v: want seccompProfile RuntimeDefault and runAsNonRoot", pod.SecurityContext)
	}
	for _, c := range pod.Containers {
		sc := c.SecurityContext
		if sc.SeccompProfile.Type != "RuntimeDefault" && sc.SeccompProfile.Type != "" {
			t.Errorf("container seccompProfile %q overrides the pod's RuntimeDefault", sc.SeccompProfile.Type)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			t.Errorf("container securityContext %+v: want allowPrivilegeEscalation false and capabilities drop ALL", sc)
		}
	}
}

// checkDisruptionBudget checks the PodDisruptionBudget: it selects the
// Deployment's pods and lets evictions through one at a time, never
// blocking a node drain.
func checkDisruptionBudget(t *testing.T, deploy, pdb *k8sDoc) {
	t.Helper()
	if pdb == nil {
		t.Error("no PodDisruptionBudget")
		return
	}
	labels := deploy.Spec.Template.Metadata.Labels
	for k, v := range pdb.Spec.Selector.MatchLabels {
		if labels[k] != v {
			t.Errorf("the budget selects %v, the pods are labelled %v", pdb.Spec.Selector.MatchLabels, labels)
		}
	}
	if len(pdb.Spec.Selector.MatchLabels) == 0 {
		t.Error("the budget selects nothing")
	}
	switch {
	case pdb.Spec.MaxUnavailable != nil:
		if *pdb.Spec.MaxUnavailable < 1 || *pdb.Spec.MaxUnavailable >= deploy.Spec.Replicas {
			t.Errorf("maxUnavailable %d with %d replicas: want 1..replicas-1", *pdb.Spec.MaxUnavailable, deploy.Spec.Replicas)
		}
	case pdb.Spec.MinAvailable != nil:
		if *pdb.Spec.MinAvailable >= deploy.Spec.Replicas {
			t.Errorf("minAvailable %d with %d replicas blocks every eviction", *pdb.Spec.MinAvailable, deploy.Spec.Replicas)
		}
	default:
		t.Error("the budget sets neither maxUnavailable nor minAvailable")
	}
}
