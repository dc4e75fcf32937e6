package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/drill"
	"github.com/drainkit/drainkit/config"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/sys/unix"
)

// timingKeys are the configuration keys the drill passes to its replicas.
var timingKeys = []string{
	"warmup.timeout", "propagation.min", "propagation.quiet", "propagation.max",
	"drain.timeout", "stop.timeout", "grace_period",
}

var drillLong = `drill starts replicas of a service as child processes, sends a fixed request rate
from consumers that learn the instances like real ones do (readiness polling like a
Kubernetes endpoints controller, a Consul or etcd watch, or Nacos), replaces every replica one by one
(start new, wait ready, stop old, wait exit), and records every request.
All strategies start their load together and stop it together, after the last
rolling restart, at least --tail later, and once no consumer still lists a
replaced replica: every strategy is measured over the same span, and the
consumers' staleness is measured to its end (a verdict says when it was not).
--prestop stops each old replica as Kubernetes does with a preStop hook running
` + "`drainkit prestop`" + `: POST /drain?wait=propagation, then SIGTERM.

By default it compares three strategies in one run, concurrently, on the same example
handlers: drainkit (the full drain), shutdown (http.Server.Shutdown on SIGTERM) and
exit (no drain). kill (SIGKILL, nothing drains: a kill -9, a lost node) can be added
with --strategies, and with --nacos offline-kill: the operator marks the old replica
offline in the Nacos console (the server's open API, as the console calls it), then
kill -9s it --offline-wait later, the first incident behind drainkit. --exec drills your own binary instead; it must accept --http-addr
and --admin-addr, serve /readyz on the admin listener and read DRAINKIT_* variables.

Scenarios (--scenario, default rolling; --scenario list describes them): rolling is the
rolling restart above; the others inflict another fault on the gating strategy's replicas
(drainkit, or the --exec binary) under the same load, and judge the consumers. For each
fault the table gives four instants (the fault, the registry's decision, the first consumer
view without the instance, the last request sent to the old address) and the failures per
second from the fault.

Consumers (--consumer): naive is a consumer as most are written: round robin over the
discovery's list (cached with --consumer-cache), no retry, no ejection. drainkit is
drainkit's consumer package over the same discovery: it resends what never reached a
server, ejects what fails and treats its view as evidence with an age. cached is naive
behind a list cache of --consumer-cache (35s by default, as Spring Cloud LoadBalancer's).
spring is a real Spring Cloud consumer: one JVM per strategy (the jar scripts/spring.sh
builds, named by $DRAINKIT_SPRING_JAR) that learns the instances from --nacos and picks one
per request through Spring Cloud LoadBalancer with its cache (--consumer-cache, default
35s; 0 turns it off); the drill's consumers send through it. The table
shows per strategy what failed, how many requests had been written to a dying
replica and not answered (only those may have reached a server: with --method POST
a consumer that is right to resend only the rest fails at most that many), how many
were retried, the consumers' ejections and their staleness.

The machine must sustain the load: one core drives about ` + fmt.Sprint(drill.CoreRate) + ` requests/s in
all (load generator, consumers and replicas together), and --rate is per strategy, so
the default three strategies at 300 requests/s need about one core. A drill whose
requests or readiness probes failed before any replica was stopped, or whose load fell
more than ` + drill.MaxPacingLag.String() + ` behind its schedule, measured the machine, not the strategies: it
is reported INVALID, naming the cause and what to lower. --sequential runs the
strategies one after another, each with the whole machine. A service that
answers HTTP errors (5xx) before any replica was stopped, at any rate, is
unhealthy (or --method, --path, --body name nothing it serves): that drill is
reported INVALID too, blaming the service, not the machine.

The load sends --method --path (default GET /) with --body: drill an
endpoint of your service's own.

--protocol grpc sends unary gRPC calls instead (grpc.testing.TestService/UnaryCall,
20 ms of work each) to the example service's gRPC listener, drained by each strategy
its way (drainkit: grpcdrain; shutdown: grpc.Server.GracefulStop on SIGTERM; exit and
kill: none), with the same strategies, table and reports. The naive consumer is what a
gRPC client in Kubernetes usually is: ClientConns with grpc-go's defaults (pick_first, no
retry policy, no health checking) to one address, a connection-level balancer like
kube-proxy that the drill runs, which picks an instance per new connection from the
discovery's list as late as the HTTP naive consumer sees it; drainkit's is
consumer/grpcresolver with health checking and its retry policy for idempotent
methods. --protocol grpc-stream opens server streams (StreamingOutputCall)
held --stream-hold each: a stream the server ends cleanly (drainkit's drain signal) is
re-opened and counts as a retry; one ended with an error status fails.

The replicas get the drain timings as DRAINKIT_* variables: the library's defaults,
overridden by DRAINKIT_* in the drill's environment, a --config file or the timing
flags below. Exit status: 0 when the drainkit strategy (or the --exec binary) lost no
request, 1 otherwise, 2 for bad usage, 3 when the drill was invalid because the machine
could not sustain its load, 4 when it was invalid because the service answered HTTP
errors before any replica was stopped.`

// The drill's exit statuses when it judged no drain (drill.Judge):
// drillInvalid when the machine could not sustain its load, drillUnhealthy
// when the service answered HTTP errors before any replica was stopped.
const (
	drillInvalid   = 3
	drillUnhealthy = 4
)

// drillOptions are the drill command's flags beyond drill.Config.
type drillOptions struct {
	cfg     drill.Config
	kube    kubeOptions
	window  windowFlags
	jsonOut bool
	report  string
	service string
}

func newDrillCmd(stdout, stderr io.Writer) *cobra.Command {
	o := &drillOptions{cfg: drill.DefaultConfig()}
	cmd := &cobra.Command{
		Use:   "drill",
		Short: "rolling-restart drill: does a drain setting lose requests under load?",
		Long:  drillLong + kubeDrillLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if slices.Contains(o.cfg.Scenarios, "list") {
				if err := drill.WriteScenarioList(stdout); err != nil {
					return &exitError{code: 1, msg: "drill: " + err.Error()}
				}
				return nil
			}
			if o.kube.enabled {
				return o.runKube(cmd.Context(), cmd.Flags(), stdout, stderr)
			}
			if err := o.complete(cmd.Flags(), stderr); err != nil {
				return err
			}
			return o.run(cmd.Context(), stdout, stderr)
		},
	}
	o.bind(cmd.Flags())
	return cmd
}

// bind adds the drill's flags.
func (o *drillOptions) bind(f *pflag.FlagSet) {
	c := &o.cfg
	f.StringSliceVar(&c.Scenarios, "scenario", c.Scenarios, "faults to rehearse, one after another: "+strings.Join(drill.ScenarioNames(), ", ")+"; list describes them")
	f.StringSliceVar(&c.Strategies, "strategies", c.Strategies, "strategies to compare: drainkit, shutdown, sleep10 (preStop: sleep 10 and not ready), exit, kill, offline-kill (with --nacos)")
	f.DurationVar(&c.Outage, "outage", c.Outage, "with --scenario registry-outage: how long the registry is unreachable")
	f.StringVar(&c.ZonePolicy, "zone-policy", c.ZonePolicy, "with --scenario zone-loss: what the drainkit consumer does when its zone is lost: spill (to the other zone) or strict (stay, and fail)")
	f.DurationVar(&c.Warmup, "warmup", c.Warmup, "with --scenario warmup: how long the built-in strategies' example service warms up (below warmup.timeout)")
	f.StringVar(&c.ConsumerKind, "consumer", c.ConsumerKind, "consumers: naive (round robin over the discovery's list, no retry), cached (naive behind a list cache, --consumer-cache, default 35s as Spring Cloud LoadBalancer's; each names itself) drainkit (drainkit's consumer package) or spring (a real Spring Cloud consumer in a JVM: Nacos discovery and Spring Cloud LoadBalancer with its cache, --consumer-cache, default 35s, 0 off; needs --nacos and $DRAINKIT_SPRING_JAR from scripts/spring.sh)")
	f.StringVar(&c.Protocol, "protocol", c.Protocol, "what the load speaks: "+strings.Join(drill.Protocols, ", ")+" (unary gRPC calls, or server streams held --stream-hold, to the example's gRPC listener)")
	f.DurationVar(&c.StreamHold, "stream-hold", c.StreamHold, "with --protocol grpc-stream: how long each request holds its server stream (below --request-timeout)")
	f.StringVar(&c.Method, "method", c.Method, "request method: "+strings.Join(drill.Methods, ", ")+" (POST, PUT and PATCH carry --body, else a small JSON body; POST and PATCH are not idempotent)")
	f.StringVar(&c.Path, "path", c.Path, "request path and query on the service, starting with '/', e.g. /orders?limit=1 (at most "+strconv.Itoa(drill.MaxPathLen)+" bytes)")
	f.StringVar(&c.Body, "body", "", "request body for POST, PUT, PATCH or DELETE (at most 1 MiB); empty: a small JSON body for POST, PUT and PATCH")
	f.IntVar(&c.Replicas, "replicas", c.Replicas, "replicas per strategy (1..20)")
	f.Float64Var(&c.Rate, "rate", c.Rate, "request rate per strategy, all its consumers together, requests/s, paced (1..5000); one core drives about "+strconv.Itoa(drill.CoreRate)+" in all strategies together")
	f.IntVar(&c.Consumers, "consumers", c.Consumers, "consumers sharing the rate, each with its own keep-alive pool and view (1..64)")
	f.DurationVar(&c.RequestTimeout, "request-timeout", c.RequestTimeout, "timeout of each request")
	f.DurationVar(&c.DiscoveryInterval, "discovery-interval", c.DiscoveryInterval, "how often discovery polls each replica's /readyz")
	f.IntVar(&c.FailureThreshold, "failure-threshold", c.FailureThreshold, "failed polls in a row that drop a replica from discovery")
	f.DurationVar(&c.ConsumerCache, "consumer-cache", 0, "each consumer reuses a discovery result this long (Spring Cloud LoadBalancer: 35s); 0: no cache")
	f.StringVar(&c.Consul, "consul", "", "Consul agent HTTP address: replicas register there (given CONSUL_HTTP_ADDR and DRAINKIT_REGISTRY_SERVICE), consumers use a watch")
	f.StringVar(&c.Etcd, "etcd", "", "etcd client address (host:port): replicas register there under a lease (given DRAINKIT_REGISTRY_ETCD_ENDPOINTS, ETCD_ENDPOINTS, DRAINKIT_REGISTRY_ETCD_PREFIX and DRAINKIT_REGISTRY_SERVICE), consumers use a watch")
	f.StringVar(&c.Nacos, "nacos", "", "Nacos server HTTP address (host:port, gRPC on port+1000): replicas register there as ephemeral instances (given DRAINKIT_REGISTRY_NACOS_SERVER_ADDR, NACOS_SERVER_ADDR and DRAINKIT_REGISTRY_SERVICE), drainkit consumers follow registry/nacos's Source, naive ones poll the open API every --nacos-poll")
	f.DurationVar(&c.NacosPoll, "nacos-poll", c.NacosPoll, "with --nacos: how often naive consumers poll the open API's healthy instance list, as a Nacos 1.x client does")
	f.DurationVar(&c.OfflineWait, "offline-wait", c.OfflineWait, "offline-kill: how long the operator waits between the console's offline and kill -9")
	f.StringVar(&o.service, "service", "", "with --exec and --consul, --etcd or --nacos: the service the binary registers as (default: registry.service, else the binary's name); the binary gets it as DRAINKIT_REGISTRY_SERVICE")
	f.DurationVar(&c.Baseline, "baseline", c.Baseline, "load before the rolling restart")
	f.DurationVar(&c.Tail, "tail", c.Tail, "least load after the rolling restart; it goes on until no consumer lists a replaced replica (at most consumer cache + (failure threshold + 2) x discovery interval more) and every strategy is done")
	f.BoolVar(&c.Sequential, "sequential", false, "run the strategies one after another, each with the whole machine, instead of at once")
	f.BoolVar(&c.Wide, "wide", false, "print every column of the text tables (the result table is about 200 columns wide) and break no line, instead of fitting 120 columns; with --kubernetes too")
	f.BoolVar(&c.PreStop, "prestop", false, "stop each old replica like the kubelet with a `drainkit prestop` hook: POST /drain?wait=propagation, then SIGTERM")
	f.StringVar(&c.Exec, "exec", "", "drill this binary instead of the built-in strategies")
	f.StringArrayVar(&c.ExecArgs, "exec-arg", nil, "argument for the --exec binary, before --http-addr and --admin-addr (repeatable)")
	f.BoolVar(&o.jsonOut, "json", false, "print the results as JSON (schema_version 2: every duration key carries its unit, _s or _ms)")
	f.StringVar(&o.report, "report", "", "write a self-contained HTML report with a timeline chart per strategy to this file")
	o.window.bind(f)
	bindTimingFlags(f)
	o.kube.bind(f)
}

// complete loads the timings (defaults, DRAINKIT_*, --config, flags), finds
// the binary to re-execute and validates everything, before anything runs;
// warnings about DRAINKIT_* variables that are no setting go to stderr.
func (o *drillOptions) complete(flags *pflag.FlagSet, stderr io.Writer) error {
	warnEnv(stderr, "drill")
	loaded, err := config.Load(config.Sources{Flags: flags})
	if err != nil {
		return &exitError{code: 2, msg: "drill: " + err.Error()}
	}
	o.cfg.Timings = loaded.Timings
	o.cfg.Checks = loaded.Checks
	o.cfg.TimingSources = map[string]string{}
	for _, k := range timingKeys {
		o.cfg.TimingSources[k] = loaded.Source(k).String()
	}
	if o.cfg.Exec == "" {
		self, err := os.Executable()
		if err != nil {
			return &exitError{code: 2, msg: "drill: cannot find my own executable to re-run as the service: " + err.Error()}
		}
		o.cfg.Self = self
	}
	o.cfg.Service = o.service
	if o.cfg.Service == "" {
		o.cfg.Service = loaded.Registry.Service // registry.service, as the replicas would read it
	}
	o.cfg.EtcdPrefix = loaded.Registry.Etcd.Prefix
	// The replicas read the same variables from the drill's environment.
	o.cfg.NacosUsername, o.cfg.NacosPassword = loaded.Registry.Nacos.Username, string(loaded.Registry.Nacos.Password)
	o.cfg.PodSlack = PodSlack
	o.cfg.SpringJar = os.Getenv(drill.EnvSpringJar)
	o.cfg.Env = os.Environ()
	if err := o.window.complete(flags, &o.cfg); err != nil {
		return &exitError{code: 2, msg: "drill: " + err.Error()}
	}
	if err := o.cfg.Validate(); err != nil {
		return &exitError{code: 2, msg: "drill: " + err.Error()}
	}
	return nil
}

// run runs the drill until done or SIGINT/SIGTERM, writes the results and
// the report, and turns the outcome into the exit status.
func (o *drillOptions) run(ctx context.Context, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if w := o.cfg.CapacityWarning(runtime.NumCPU()); w != "" {
		fmt.Fprintln(stderr, "drainkit: warning: "+w)
	}
	progress := &drill.Progress{Out: stderr, Terminal: isTerminal(stderr)}
	res, err := drill.Run(ctx, o.cfg, progress)
	if err != nil {
		return &exitError{code: 2, msg: "drill: " + err.Error()}
	}
	sums := drill.Summaries(res)
	if err := o.write(stdout, stderr, res, sums); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return &exitError{code: 130, msg: "drill interrupted"}
	}
	if v := drill.Judge(res, sums); v.Cause == drill.CauseService {
		return &exitError{code: drillUnhealthy, msg: "drill: the service under drill answered HTTP errors (5xx) before any replica was stopped: it is unhealthy, or --method, --path and --body name nothing it serves; the drill judged no drain (see the result)"}
	} else if !v.Valid {
		return &exitError{code: drillInvalid, msg: "drill: the machine could not sustain the load: lower --rate, --replicas or --consumers, or use --sequential (see the result)"}
	}
	if !drill.Passed(res, sums) {
		return &exitError{code: 1}
	}
	return nil
}

// write prints the table or JSON and writes the HTML report if asked.
func (o *drillOptions) write(stdout, stderr io.Writer, res *drill.Result, sums []drill.Summary) error {
	var err error
	if o.jsonOut {
		err = drill.WriteJSON(stdout, res, sums)
	} else {
		err = drill.WriteTable(stdout, res, sums)
	}
	if err != nil {
		return &exitError{code: 1, msg: "drill: writing the results: " + err.Error()}
	}
	if o.report == "" {
		return nil
	}
	if err := writeReport(o.report, res, sums); err != nil {
		return &exitError{code: 1, msg: "drill: --report: " + err.Error()}
	}
	fmt.Fprintf(stderr, "drainkit: report written to %s\n", o.report)
	return nil
}

// bindTimingFlags adds --config and the timing flags of the config package
// (--propagation-min, ...), and nothing else of it: the drill picks the
// replicas' addresses itself.
func bindTimingFlags(f *pflag.FlagSet) {
	all := pflag.NewFlagSet("config", pflag.ContinueOnError)
	config.BindFlags(all)
	f.AddFlag(all.Lookup(config.KeyConfig))
	for _, k := range timingKeys {
		f.AddFlag(all.Lookup(config.FlagName(k)))
	}
}

// isTerminal reports whether w is a terminal (for the \r progress line).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
