package kubedrill

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// deployedPod is the part of a strategy's Deployment the test reads.
type deployedPod struct {
	Items []struct {
		Kind string `json:"kind"`
		Spec struct {
			Template struct {
				Spec struct {
					Grace      int `json:"terminationGracePeriodSeconds"`
					Containers []struct {
						Args           []string `json:"args"`
						ReadinessProbe struct {
							PeriodSeconds int `json:"periodSeconds"`
							HTTPGet       struct {
								Path string `json:"path"`
							} `json:"httpGet"`
						} `json:"readinessProbe"`
						Lifecycle *struct {
							PreStop struct {
								Exec  *struct{ Command []string } `json:"exec"`
								Sleep *struct{ Seconds int }      `json:"sleep"`
							} `json:"preStop"`
						} `json:"lifecycle"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	} `json:"items"`
}

// Each strategy's pods: drainkit as examples/kubernetes ships it (preStop
// through the binary, /servingz, grace_period + 5 s), sleep behind the
// native sleep action, shutdown with no hook; readiness every second.
func TestServerManifests(t *testing.T) {
	c := DefaultConfig()
	c.Image = "example.invalid/drainkit:1"
	for _, tc := range []struct {
		strategy, readiness, serve string
		grace                      int
		exec                       []string
		sleep                      int
	}{
		{StrategyDrainkit, "/servingz", "drainkit", 35, []string{"/drainkit", "prestop"}, 0},
		{StrategyShutdown, "/readyz", "shutdown", 30, nil, 0},
		{StrategySleep, "/readyz", "shutdown", 35, nil, 5},
	} {
		b, err := c.serverManifests(tc.strategy)
		if err != nil {
			t.Fatal(err)
		}
		var l deployedPod
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatal(err)
		}
		if len(l.Items) != 2 || l.Items[0].Kind != "Deployment" || l.Items[1].Kind != "Service" {
			t.Fatalf("%s: want a Deployment and a Service: %s", tc.strategy, b)
		}
		spec := l.Items[0].Spec.Template.Spec
		ctr := spec.Containers[0]
		if spec.Grace != tc.grace || ctr.ReadinessProbe.HTTPGet.Path != tc.readiness || ctr.ReadinessProbe.PeriodSeconds != 1 ||
			!slices.Contains(ctr.Args, tc.serve) {
			t.Errorf("%s: grace %d, readiness %s every %ds, args %v", tc.strategy, spec.Grace, ctr.ReadinessProbe.HTTPGet.Path, ctr.ReadinessProbe.PeriodSeconds, ctr.Args)
		}
		switch {
		case tc.exec != nil:
			if ctr.Lifecycle == nil || ctr.Lifecycle.PreStop.Exec == nil || !slices.Equal(ctr.Lifecycle.PreStop.Exec.Command, tc.exec) {
				t.Errorf("%s: preStop %s, want exec %v", tc.strategy, b, tc.exec)
			}
		case tc.sleep > 0:
			if ctr.Lifecycle == nil || ctr.Lifecycle.PreStop.Sleep == nil || ctr.Lifecycle.PreStop.Sleep.Seconds != tc.sleep {
				t.Errorf("%s: preStop %s, want sleep %d", tc.strategy, b, tc.sleep)
			}
		case ctr.Lifecycle != nil:
			t.Errorf("%s: a preStop hook: %s", tc.strategy, b)
		}
	}
}

func TestValidateNamesTheFlag(t *testing.T) {
	for flag, mutate := range map[string]func(*Config){
		"--image":             func(c *Config) { c.Image = "" },
		"--image-binary":      func(c *Config) { c.ImageBinary = "drainkit" },
		"--replicas":          func(c *Config) { c.Replicas = 1 },
		"--prestop-sleep":     func(c *Config) { c.PreStopSleep = 1500 * time.Millisecond },
		"--kube-load":         func(c *Config) { c.Loads = []string{"carrier-pigeon"} },
		"--kube-slices-image": func(c *Config) { c.Loads = []string{LoadService, LoadEndpointSlices} },
		"--strategies":        func(c *Config) { c.Strategies = []string{"exit"} },
		"--kube-proxy-rules":  func(c *Config) { c.Rules = "maybe" },
	} {
		c := DefaultConfig()
		c.Image = "x:1"
		mutate(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%s: Validate = %v, want an error naming it", flag, err)
		}
	}
	c := DefaultConfig()
	c.Image = "x:1"
	if err := c.Validate(); err != nil {
		t.Errorf("defaults with an image: %v", err)
	}
}

// The endpointslices load pod runs the kubeslices image under the drill's
// ServiceAccount, sending to NAMESPACE/SERVICE; the service load pod runs
// the drainkit image with the Service's URL. The Role lets that account
// read EndpointSlices and nothing else.
func TestLoadManifests(t *testing.T) {
	c := DefaultConfig()
	c.Image, c.SlicesImage, c.Namespace = "x.invalid/drainkit:1", "x.invalid/kubeslices:1", "drill-ns"
	var pod struct {
		Metadata struct{ Name string }
		Spec     struct {
			ServiceAccountName string `json:"serviceAccountName"`
			Containers         []struct {
				Image string
				Args  []string
			}
		}
	}
	for _, tc := range []struct{ kind, image, account, target string }{
		{LoadService, c.Image, "", "http://10.96.0.7:80/"},
		{LoadEndpointSlices, c.SlicesImage, loadServiceAccount, "drill-ns/drill-drainkit"},
	} {
		b, err := c.loadManifest(StrategyDrainkit, tc.kind, "10.96.0.7")
		if err != nil {
			t.Fatal(err)
		}
		pod.Spec.ServiceAccountName = ""
		if err := json.Unmarshal(b, &pod); err != nil {
			t.Fatal(err)
		}
		ctr := pod.Spec.Containers[0]
		i := slices.Index(ctr.Args, "--target")
		if pod.Metadata.Name != loadPodName(StrategyDrainkit, tc.kind) || ctr.Image != tc.image || pod.Spec.ServiceAccountName != tc.account ||
			i < 0 || ctr.Args[i+1] != tc.target || !slices.Contains(ctr.Args, tc.kind) {
			t.Errorf("%s: %s", tc.kind, b)
		}
	}
	b, err := rbacManifests()
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Items []struct {
			Kind  string
			Rules []struct {
				APIGroups []string `json:"apiGroups"`
				Resources []string
				Verbs     []string
			}
		}
	}
	if err := json.Unmarshal(b, &l); err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 3 || l.Items[1].Kind != "Role" || len(l.Items[1].Rules) != 1 ||
		!slices.Equal(l.Items[1].Rules[0].Resources, []string{"endpointslices"}) || !slices.Equal(l.Items[1].Rules[0].Verbs, []string{"get", "list", "watch"}) {
		t.Errorf("RBAC: %s", b)
	}
}
