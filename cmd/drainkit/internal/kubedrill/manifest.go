package kubedrill

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Labels the drill puts on what it creates.
const (
	// labelRole is "server" (a service pod and its Deployment and
	// Service) or "load" (a load pod).
	labelRole = "drill.drainkit.dev/role"
	// labelStrategy is the strategy a server or load pod belongs to.
	labelStrategy = "drill.drainkit.dev/strategy"
	// labelLoad is a load pod's load kind.
	labelLoad = "drill.drainkit.dev/load"
)

// Ports of the service pods: the example's listener and the admin
// listener (probes, /drain for the preStop hook).
const (
	httpPort  = 8080
	adminPort = 8081
)

// deploymentName is the Deployment (and Service) of strategy s.
func deploymentName(s string) string { return "drill-" + s }

// loadPodName is the load pod of strategy s and load kind kind.
func loadPodName(s, kind string) string { return "load-" + s + "-" + kind }

// loadServiceAccount is the ServiceAccount of the load pods of the kinds
// that read EndpointSlices (LoadKind.ownImage).
const loadServiceAccount = "drill-load"

// podSpec is what differs between the strategies' pods.
type podSpec struct {
	args      []string
	readiness string         // the readiness probe's path on the admin port
	preStop   map[string]any // nil: no preStop hook
	grace     time.Duration  // terminationGracePeriodSeconds
	env       []string       // beyond DRAINKIT_ADMIN_ADDR
}

// spec returns the pods of strategy s.
func (c Config) spec(s string) podSpec {
	serve := func(strategy string) []string {
		return []string{"serve", "--strategy", strategy, "--http-addr", ":" + strconv.Itoa(httpPort)}
	}
	switch s {
	case StrategyDrainkit:
		// As examples/kubernetes ships it: /servingz, the preStop hook
		// through the binary, the grace period drainkit's budget + 5s.
		return podSpec{
			args: serve(StrategyDrainkit), readiness: "/servingz",
			preStop: map[string]any{"exec": map[string]any{"command": []string{c.ImageBinary, "prestop"}}},
			grace:   c.GracePeriod + 5*time.Second, env: c.Env,
		}
	case StrategySleep:
		return podSpec{
			args: serve(StrategyShutdown), readiness: "/readyz",
			preStop: map[string]any{"sleep": map[string]any{"seconds": int(c.PreStopSleep / time.Second)}},
			grace:   c.PreStopSleep + 30*time.Second,
		}
	default: // StrategyShutdown
		return podSpec{args: serve(StrategyShutdown), readiness: "/readyz", grace: 30 * time.Second}
	}
}

// envVars turns NAME=value strings into a container's env.
func envVars(kv []string) []map[string]any {
	out := []map[string]any{{"name": "DRAINKIT_ADMIN_ADDR", "value": ":" + strconv.Itoa(adminPort)}}
	for _, e := range kv {
		name, value, _ := strings.Cut(e, "=")
		out = append(out, map[string]any{"name": name, "value": value})
	}
	return out
}

// serverManifests returns strategy s's Deployment and Service as a
// kubectl List (JSON). The Deployment rolls like examples/kubernetes: one
// new pod first (maxSurge 1), an old one stopped only once it is ready
// (maxUnavailable 0); readiness every 1 s.
func (c Config) serverManifests(s string) ([]byte, error) {
	name := deploymentName(s)
	labels := map[string]string{"app": name, labelRole: "server", labelStrategy: s}
	p := c.spec(s)
	container := map[string]any{
		"name": "service", "image": c.Image, "imagePullPolicy": c.PullPolicy,
		"args": p.args, "env": envVars(p.env),
		"ports": []map[string]any{{"name": "http", "containerPort": httpPort}, {"name": "admin", "containerPort": adminPort}},
		// CPU requests as examples/kubernetes has them: a BestEffort pod
		// gets the least CPU shares, and a busy node would starve it.
		"resources": map[string]any{"requests": map[string]any{"cpu": "100m"}},
		"readinessProbe": map[string]any{
			"httpGet":       map[string]any{"path": p.readiness, "port": adminPort},
			"periodSeconds": 1, "timeoutSeconds": 1, "failureThreshold": 1,
		},
	}
	if p.preStop != nil {
		container["lifecycle"] = map[string]any{"preStop": p.preStop}
	}
	deployment := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "labels": labels},
		"spec": map[string]any{
			"replicas": c.Replicas,
			"selector": map[string]any{"matchLabels": map[string]string{"app": name}},
			"strategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxSurge": 1, "maxUnavailable": 0}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": labels},
				"spec": map[string]any{
					"terminationGracePeriodSeconds": int(p.grace / time.Second),
					"containers":                    []any{container},
				},
			},
		},
	}
	service := map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": name, "labels": labels},
		"spec": map[string]any{
			"selector": map[string]string{"app": name},
			"ports":    []map[string]any{{"name": "http", "port": 80, "targetPort": httpPort}},
		},
	}
	return json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{deployment, service}})
}

// loadManifest returns the load pod of strategy s and load kind kind,
// sending to the Service at clusterIP.
func (c Config) loadManifest(s, kind, clusterIP string) ([]byte, error) {
	k := LoadKinds[kind]
	args := []string{"kube-load", "--via", kind, "--target", k.target(c.Namespace, deploymentName(s), clusterIP),
		"--rate", strconv.FormatFloat(c.Rate, 'g', -1, 64), "--request-timeout", c.RequestTimeout.String()}
	image := c.Image
	spec := map[string]any{
		"restartPolicy": "Never",
		// SIGTERM stops the load; it then waits for what is in
		// flight (at most the request timeout) and prints its summary.
		"terminationGracePeriodSeconds": int((c.RequestTimeout+10*time.Second)/time.Second) + 1,
	}
	if k.ownImage {
		image = c.SlicesImage
		spec["serviceAccountName"] = loadServiceAccount
	}
	spec["containers"] = []any{map[string]any{
		"name": "load", "image": image, "imagePullPolicy": c.PullPolicy, "args": args,
		// The load must keep its pace on a busy node: a load pod that
		// falls behind measures the machine (Result.Invalid).
		"resources": map[string]any{"requests": map[string]any{"cpu": "500m"}},
	}}
	return json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": loadPodName(s, kind), "labels": map[string]string{labelRole: "load", labelStrategy: s, labelLoad: kind}},
		"spec":     spec,
	})
}

// rbacManifests returns the ServiceAccount of the load pods that read the
// EndpointSlices, with a Role that may get, list and watch the
// namespace's EndpointSlices (what registry/kubernetes's source does, and
// nothing else) and its RoleBinding, as a kubectl List (JSON).
func rbacManifests() ([]byte, error) {
	sa := map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": loadServiceAccount}}
	role := map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
		"metadata": map[string]any{"name": loadServiceAccount},
		"rules": []any{map[string]any{
			"apiGroups": []string{"discovery.k8s.io"}, "resources": []string{"endpointslices"},
			"verbs": []string{"get", "list", "watch"},
		}},
	}
	binding := map[string]any{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
		"metadata": map[string]any{"name": loadServiceAccount},
		"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": loadServiceAccount},
		"subjects": []any{map[string]any{"kind": "ServiceAccount", "name": loadServiceAccount}},
	}
	return json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": []any{sa, role, binding}})
}
