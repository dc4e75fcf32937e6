// Package kubedrill is `drainkit drill --kubernetes`: the rolling restart
// on a real cluster. Per strategy it deploys the image as a Deployment
// behind a Service, runs load pods that send a fixed rate through the
// Service (kube-proxy) and, with LoadEndpointSlices, through drainkit's
// consumer fed by the EndpointSlices, runs `kubectl rollout restart` on
// every Deployment at once and records, for each old pod, the four instants: the kubelet's
// SIGTERM, the EndpointSlice conditions (ready=false, serving=false,
// terminating), kube-proxy's rules without the pod, and the last request
// the pod answered; then the failures per pod and the drain time (the pod's
// deletion to its container's exit).
//
// It drives the cluster with kubectl (get --watch -o json, apply, logs -f)
// rather than client-go, so that the drainkit command links no Kubernetes
// client; the one load kind that needs a client runs from an image of its
// own (cmd/drainkit/internal/kubeslices, see LoadEndpointSlices).
package kubedrill

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The strategies on the cluster.
const (
	// StrategyDrainkit is drainkit's drain with the preStop hook through
	// the service binary ([binary, "prestop"]) and readiness on /servingz.
	StrategyDrainkit = "drainkit"
	// StrategyShutdown is http.Server.Shutdown at SIGTERM, no preStop.
	StrategyShutdown = "shutdown"
	// StrategySleep is the shutdown strategy behind a `preStop: sleep`
	// of Config.PreStopSleep: the baseline users pick.
	StrategySleep = "sleep"
)

// Strategies are the strategies the drill knows, in report order.
var Strategies = []string{StrategyDrainkit, StrategyShutdown, StrategySleep}

// Config is one Kubernetes drill.
type Config struct {
	// Kubectl is the kubectl command; Kubeconfig, if set, its
	// --kubeconfig.
	Kubectl, Kubeconfig string
	// Namespace is the namespace the drill creates, uses and deletes; it
	// must not exist. Empty: drainkit-drill-<time>.
	Namespace string
	// Image is the image of the service pods and the load pods: one whose
	// binary is drainkit's (`drainkit serve`, `drainkit prestop` and
	// `drainkit kube-load`). ImageBinary is that binary's path in the
	// image (the preStop hook's command), PullPolicy the pods'
	// imagePullPolicy.
	Image, ImageBinary, PullPolicy string
	// SlicesImage is the image of the load pods of the kinds that read
	// the EndpointSlices (LoadEndpointSlices): its entrypoint is the
	// binary of cmd/drainkit/internal/kubeslices, which has `kube-load`
	// with a Kubernetes client. Required when Loads has such a kind.
	SlicesImage string
	// Strategies to compare, each in its own Deployment: one after
	// another (each with the machine to itself), or all at once with
	// Concurrent.
	Strategies []string
	Concurrent bool
	// Replicas per strategy.
	Replicas int
	// Rate is requests/s per strategy, from one load pod.
	Rate float64
	// Loads are the load kinds (LoadKinds): each strategy gets a load pod
	// of each kind, all at Rate, through the same rollout.
	Loads []string
	// RequestTimeout bounds each request.
	RequestTimeout time.Duration
	// PreStopSleep is StrategySleep's preStop sleep (whole seconds).
	PreStopSleep time.Duration
	// Baseline is the load before the restart; Tail the least load after
	// the last old pod exited.
	Baseline, Tail time.Duration
	// Timeout bounds the whole drill.
	Timeout time.Duration
	// Env are the drainkit strategy's extra variables (DRAINKIT_* the user
	// set), NAME=value.
	Env []string
	// GracePeriod is the drainkit strategy's grace_period: its pods get
	// terminationGracePeriodSeconds = GracePeriod + 5 s.
	GracePeriod time.Duration
	// Rules says whether to read kube-proxy's rules (iptables-save -t nat
	// in the drill's network namespace): "auto" (when this process can),
	// "on" or "off".
	Rules string
}

// DefaultConfig returns the drill's defaults: the three strategies, 3
// replicas, 200 requests/s, sleep 5s.
func DefaultConfig() Config {
	return Config{
		Kubectl: "kubectl", ImageBinary: "/drainkit", PullPolicy: "IfNotPresent",
		Strategies: slices.Clone(Strategies), Replicas: 3, Rate: 200, Loads: []string{LoadService},
		RequestTimeout: 2 * time.Second, PreStopSleep: 5 * time.Second,
		Baseline: 3 * time.Second, Tail: 3 * time.Second, Timeout: 5 * time.Minute,
		GracePeriod: 30 * time.Second, Rules: "auto",
	}
}

// Validate checks c, naming the flag of a bad value.
func (c Config) Validate() error {
	switch {
	case c.Image == "":
		return fmt.Errorf("--image is required with --kubernetes: an image holding the drainkit binary at --image-binary")
	case !strings.HasPrefix(c.ImageBinary, "/"):
		return fmt.Errorf("--image-binary %q: want an absolute path in the image", c.ImageBinary)
	case c.Replicas < 2 || c.Replicas > 20:
		return fmt.Errorf("--replicas %d: want 2..20 with --kubernetes (a rolling restart of one pod measures no Service)", c.Replicas)
	case c.Rate < 1 || c.Rate > 2000:
		return fmt.Errorf("--rate %g: want 1..2000 requests/s per strategy with --kubernetes", c.Rate)
	case c.PreStopSleep < time.Second || c.PreStopSleep%time.Second != 0:
		return fmt.Errorf("--prestop-sleep %s: want whole seconds, at least 1s (preStop sleep takes seconds)", c.PreStopSleep)
	case c.RequestTimeout <= 0:
		return fmt.Errorf("--request-timeout %s: want > 0", c.RequestTimeout)
	case c.Baseline < 0 || c.Tail < 0:
		return fmt.Errorf("--baseline and --tail must not be negative")
	case c.Timeout <= 0:
		return fmt.Errorf("--kube-timeout %s: want > 0", c.Timeout)
	case c.Rules != "auto" && c.Rules != "on" && c.Rules != "off":
		return fmt.Errorf("--kube-proxy-rules %q: want auto, on or off", c.Rules)
	}
	if len(c.Loads) == 0 {
		return fmt.Errorf("--kube-load: none given: want one or more of %s", strings.Join(loadKindNames(), ", "))
	}
	for i, l := range c.Loads {
		k, ok := LoadKinds[l]
		switch {
		case !ok:
			return fmt.Errorf("--kube-load %q: want one or more of %s", l, strings.Join(loadKindNames(), ", "))
		case slices.Contains(c.Loads[:i], l):
			return fmt.Errorf("--kube-load: %q given twice", l)
		case k.ownImage && c.SlicesImage == "":
			return fmt.Errorf("--kube-load %s needs --kube-slices-image: the image of cmd/drainkit/internal/kubeslices (the drainkit binary links no Kubernetes client)", l)
		}
	}
	if len(c.Strategies) == 0 {
		return fmt.Errorf("--strategies: none given")
	}
	for _, s := range c.Strategies {
		if !slices.Contains(Strategies, s) {
			return fmt.Errorf("--strategies: %q is not a strategy with --kubernetes: want %s", s, strings.Join(Strategies, ", "))
		}
	}
	return nil
}
