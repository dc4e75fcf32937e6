package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
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

func newDrillCmd(stdout, stderr io.Writer) *cobra.Command {
	cfg := drill.DefaultConfig()
	var (
		jsonOut bool
		report  string
		service string
	)
	cmd := &cobra.Command{
		Use:   "drill",
		Short: "rolling-restart drill: does a drain setting lose requests under load?",
		Long: `drill starts replicas of a service as child processes, sends a fixed request rate
from consumers that learn the instances like real ones do (readiness polling like a
Kubernetes endpoints controller, or a Consul watch), replaces every replica one by one
(start new, wait ready, SIGTERM old, wait exit), and records every request.
All strategies start their load together and stop it together, after the last
rolling restart, at least --tail later, and once no consumer still lists a
replaced replica: every strategy is measured over the same span, and the
consumers' staleness is measured to its end (a verdict says when it was not).
--prestop stops each old replica as Kubernetes does with a preStop hook running
` + "`drainkit prestop`" + `: POST /drain?wait=propagation, then SIGTERM.

By default it compares three strategies in one run, concurrently, on the same example
handlers: drainkit (the full drain), shutdown (http.Server.Shutdown on SIGTERM) and
exit (no drain). --exec drills your own binary instead; it must accept --http-addr
and --admin-addr, serve /readyz on the admin listener and read DRAINKIT_* variables.

The replicas get the drain timings as DRAINKIT_* variables: the library's defaults,
overridden by DRAINKIT_* in the drill's environment, a --config file or the timing
flags below. Exit status: 0 when the drainkit strategy (or the --exec binary) lost no
request, 1 otherwise, 2 for bad usage.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			loaded, err := config.Load(config.Sources{Flags: cmd.Flags()})
			if err != nil {
				return &exitError{code: 2, msg: "drill: " + err.Error()}
			}
			cfg.Timings = loaded.Timings
			cfg.TimingSources = map[string]string{}
			for _, k := range timingKeys {
				cfg.TimingSources[k] = loaded.Source(k).String()
			}
			if cfg.Exec == "" {
				self, err := os.Executable()
				if err != nil {
					return &exitError{code: 2, msg: "drill: cannot find my own executable to re-run as the service: " + err.Error()}
				}
				cfg.Self = self
			}
			cfg.Service = service
			cfg.Env = os.Environ()
			if err := cfg.Validate(); err != nil {
				return &exitError{code: 2, msg: "drill: " + err.Error()}
			}

			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			progress := &drill.Progress{Out: stderr, Terminal: isTerminal(stderr)}
			res, err := drill.Run(ctx, cfg, progress)
			if err != nil {
				return &exitError{code: 2, msg: "drill: " + err.Error()}
			}
			sums := drill.Summaries(res)
			if jsonOut {
				err = drill.WriteJSON(stdout, res, sums)
			} else {
				err = drill.WriteTable(stdout, res, sums)
			}
			if err != nil {
				return &exitError{code: 1, msg: "drill: writing the results: " + err.Error()}
			}
			if report != "" {
				if err := writeReport(report, res, sums); err != nil {
					return &exitError{code: 1, msg: "drill: --report: " + err.Error()}
				}
				fmt.Fprintf(stderr, "drainkit: report written to %s\n", report)
			}
			if ctx.Err() != nil {
				return &exitError{code: 130, msg: "drill interrupted"}
			}
			if !drill.Passed(res, sums) {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&cfg.Strategies, "strategies", cfg.Strategies, "strategies to compare: drainkit, shutdown, exit")
	f.IntVar(&cfg.Replicas, "replicas", cfg.Replicas, "replicas per strategy (1..20)")
	f.Float64Var(&cfg.Rate, "rate", cfg.Rate, "total request rate of all consumers, requests/s, paced (1..5000)")
	f.IntVar(&cfg.Consumers, "consumers", cfg.Consumers, "consumers sharing the rate, each with its own keep-alive pool and view (1..64)")
	f.DurationVar(&cfg.RequestTimeout, "request-timeout", cfg.RequestTimeout, "timeout of each request")
	f.DurationVar(&cfg.DiscoveryInterval, "discovery-interval", cfg.DiscoveryInterval, "how often discovery polls each replica's /readyz")
	f.IntVar(&cfg.FailureThreshold, "failure-threshold", cfg.FailureThreshold, "failed polls in a row that drop a replica from discovery")
	f.DurationVar(&cfg.ConsumerCache, "consumer-cache", 0, "each consumer reuses a discovery result this long (Spring Cloud LoadBalancer: 35s); 0: no cache")
	f.StringVar(&cfg.Consul, "consul", "", "Consul agent HTTP address: replicas register there, consumers use a watch")
	f.StringVar(&service, "service", "", "with --exec and --consul: the Consul service the binary registers as (default: the binary's name)")
	f.DurationVar(&cfg.Baseline, "baseline", cfg.Baseline, "load before the rolling restart")
	f.DurationVar(&cfg.Tail, "tail", cfg.Tail, "least load after the rolling restart; it goes on until no consumer lists a replaced replica (at most consumer cache + (failure threshold + 2) x discovery interval more) and every strategy is done")
	f.BoolVar(&cfg.PreStop, "prestop", false, "stop each old replica like the kubelet with a `drainkit prestop` hook: POST /drain?wait=propagation, then SIGTERM")
	f.StringVar(&cfg.Exec, "exec", "", "drill this binary instead of the built-in strategies")
	f.StringArrayVar(&cfg.ExecArgs, "exec-arg", nil, "argument for the --exec binary, before --http-addr and --admin-addr (repeatable)")
	f.BoolVar(&jsonOut, "json", false, "print the results as JSON")
	f.StringVar(&report, "report", "", "write a self-contained HTML report with a timeline chart per strategy to this file")
	bindTimingFlags(f)
	return cmd
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
