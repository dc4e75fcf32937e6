package main

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"time"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/kubedrill"
	"github.com/drainkit/drainkit/config"
	"github.com/spf13/pflag"
)

// kubeOptions are the drill's --kubernetes flags; the drill's own
// --strategies, --replicas, --rate, --request-timeout, --baseline and --tail
// apply when given (else kubedrill's defaults), and --wide to its text
// output (kubedrill.WriteTable).
type kubeOptions struct {
	enabled bool
	cfg     kubedrill.Config
}

// bind adds the --kubernetes flags.
func (k *kubeOptions) bind(f *pflag.FlagSet) {
	k.cfg = kubedrill.DefaultConfig()
	c := &k.cfg
	f.BoolVar(&k.enabled, "kubernetes", false, "drill on a Kubernetes cluster (kubectl's current context, or --kubeconfig): a Deployment per strategy of --image behind a Service, load pods through the Service, `kubectl rollout restart`; strategies drainkit, shutdown, sleep")
	f.StringVar(&c.Image, "image", "", "with --kubernetes: the image of the service and load pods, holding the drainkit binary at --image-binary")
	f.StringVar(&c.ImageBinary, "image-binary", c.ImageBinary, "with --kubernetes: the drainkit binary's path in --image (the preStop hook's command)")
	f.StringVar(&c.PullPolicy, "image-pull-policy", c.PullPolicy, "with --kubernetes: the pods' imagePullPolicy")
	f.StringVar(&c.Kubectl, "kubectl", c.Kubectl, "with --kubernetes: the kubectl command")
	f.StringVar(&c.Kubeconfig, "kubeconfig", "", "with --kubernetes: kubectl's --kubeconfig (default: kubectl's own)")
	f.StringVar(&c.Namespace, "namespace", "", "with --kubernetes: the namespace to create, drill in and delete (must not exist; default drainkit-drill-<unix time>)")
	f.DurationVar(&c.PreStopSleep, "prestop-sleep", c.PreStopSleep, "with --kubernetes: the sleep strategy's `preStop: sleep` (whole seconds), the baseline")
	f.StringSliceVar(&c.Loads, "kube-load", c.Loads, "with --kubernetes: how the load pods reach the service, one load pod per strategy and kind, comma-separated: service (the ClusterIP through kube-proxy, a new connection per request), endpointslices (the pod IPs through drainkit's consumer fed by the EndpointSlices; needs --kube-slices-image)")
	f.StringVar(&c.SlicesImage, "kube-slices-image", "", "with --kubernetes and --kube-load endpointslices: the image of those load pods, whose entrypoint is the binary of cmd/drainkit/internal/kubeslices (kube-load with a Kubernetes client, which the drainkit binary does not link)")
	f.StringVar(&c.Rules, "kube-proxy-rules", c.Rules, "with --kubernetes: read kube-proxy's iptables rules (iptables-save, as root on the node): auto, on or off")
	f.BoolVar(&c.Concurrent, "kube-concurrent", false, "with --kubernetes: restart every strategy's Deployment at once instead of one after another (each with the machine to itself)")
	f.DurationVar(&c.Timeout, "kube-timeout", c.Timeout, "with --kubernetes: bound of the whole drill")
}

// kubeIgnored are the drill's flags that mean nothing on the cluster:
// --kubernetes refuses them rather than run something else than asked.
var kubeIgnored = []string{"exec", "exec-arg", "consul", "etcd", "nacos", "scenario", "protocol", "consumer", "consumer-cache", "consumer-rate", "prestop", "method", "path", "body", "report"}

// fromDrillFlags takes the drill's flags that --kubernetes reads when
// given; it fails naming a flag that means nothing on the cluster.
func (k *kubeOptions) fromDrillFlags(f *pflag.FlagSet, o *drillOptions) error {
	for _, name := range kubeIgnored {
		if f.Changed(name) {
			return fmt.Errorf("--%s is not supported with --kubernetes", name)
		}
	}
	c := &k.cfg
	if f.Changed("strategies") {
		c.Strategies = o.cfg.Strategies
	}
	if f.Changed("sequential") {
		c.Concurrent = !o.cfg.Sequential
	}
	if f.Changed("replicas") {
		c.Replicas = o.cfg.Replicas
	}
	if f.Changed("rate") {
		c.Rate = o.cfg.Rate
	}
	if f.Changed("request-timeout") {
		c.RequestTimeout = o.cfg.RequestTimeout
	}
	if f.Changed("baseline") {
		c.Baseline = o.cfg.Baseline
	}
	if f.Changed("tail") {
		c.Tail = o.cfg.Tail
	}
	return nil
}

// runKube runs `drill --kubernetes`: the timings (DRAINKIT_*, --config,
// the timing flags) go to the drainkit strategy's pods as DRAINKIT_*
// variables, only those set somewhere, so that a default left alone stays a
// default there (propagation.min yields to evidence only then).
func (o *drillOptions) runKube(ctx context.Context, flags *pflag.FlagSet, stdout, stderr io.Writer) error {
	warnEnv(stderr, "drill")
	loaded, err := config.Load(config.Sources{Flags: flags})
	if err != nil {
		return &exitError{code: 2, msg: "drill: " + err.Error()}
	}
	k := &o.kube
	if err := k.fromDrillFlags(flags, o); err != nil {
		return &exitError{code: 2, msg: "drill: " + err.Error()}
	}
	k.cfg.GracePeriod = loaded.Timings.GracePeriod
	values := map[string]time.Duration{
		"warmup.timeout": loaded.Timings.WarmupTimeout, "propagation.min": loaded.Timings.PropagationMin,
		"propagation.quiet": loaded.Timings.PropagationQuiet, "propagation.max": loaded.Timings.PropagationMax,
		"drain.timeout": loaded.Timings.DrainTimeout, "stop.timeout": loaded.Timings.StopTimeout,
		"grace_period": loaded.Timings.GracePeriod,
	}
	for _, key := range timingKeys {
		if loaded.Source(key).Kind != config.FromDefault {
			k.cfg.Env = append(k.cfg.Env, config.EnvVar(key)+"="+values[key].String())
		}
	}
	if err := k.cfg.Validate(); err != nil {
		return &exitError{code: 2, msg: "drill: " + err.Error()}
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	res, err := kubedrill.Run(ctx, k.cfg, stderr)
	if err != nil {
		return &exitError{code: 2, msg: "drill --kubernetes: " + err.Error()}
	}
	if o.jsonOut {
		err = kubedrill.WriteJSON(stdout, res)
	} else {
		err = kubedrill.WriteTable(stdout, res, o.cfg.Wide)
	}
	if err != nil {
		return &exitError{code: 1, msg: "drill: writing the results: " + err.Error()}
	}
	if res.Invalid != "" {
		return &exitError{code: drillInvalid, msg: "drill --kubernetes: " + res.Invalid}
	}
	if !kubedrill.Passed(res) {
		return &exitError{code: 1}
	}
	return nil
}

// kubeDrillLong is --help's paragraph on --kubernetes.
const kubeDrillLong = `

--kubernetes drills on a cluster instead (kubectl, --kubeconfig): per strategy a
Deployment of --image (the drainkit binary at --image-binary) behind a Service, a load
pod sending --rate requests/s through the Service's ClusterIP (kube-proxy) and, with
--kube-load service,endpointslices, another through drainkit's consumer fed by the
Service's EndpointSlices (image: --kube-slices-image), ` + "`kubectl rollout restart`" + `
of every Deployment at once; for each old pod the table gives the kubelet's SIGTERM, the
EndpointSlice's ready=false, serving=false and terminating, kube-proxy's rules without it
(as root on the node), the last request it answered, its failures and its drain time.
Strategies: drainkit (preStop through the binary, readiness on /servingz), shutdown
(Shutdown at SIGTERM), sleep (Shutdown behind ` + "`preStop: sleep`" + ` of --prestop-sleep).`
