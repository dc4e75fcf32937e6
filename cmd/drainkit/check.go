package main

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/drainkit/drainkit/config"
	"github.com/spf13/cobra"
)

func newCheckCmd(stdout io.Writer) *cobra.Command {
	var tgps time.Duration
	cmd := &cobra.Command{
		Use:   "check",
		Short: "print a configuration's drain budget and judge it against the pod's grace period",
		Long: `check loads the configuration the way the service does (--config file, DRAINKIT_*
variables, flags), prints the drain budget (propagation window, drain.timeout,
stop.timeout, margin, grace_period) and judges it against Kubernetes'
terminationGracePeriodSeconds: the kubelet sends SIGKILL that long after it started
terminating the pod, and a preStop hook's time counts against it, so the whole drain
(grace_period, counted from the drain's start) must fit inside it.

Exit status: 0 when the budget fits, 1 when it does not, 2 for a configuration that
does not load.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tgps <= 0 {
				return &exitError{code: 2, msg: fmt.Sprintf("check: --termination-grace-period %s: must be > 0 (Kubernetes' default is 30s)", tgps)}
			}
			cfg, err := config.Load(config.Sources{Flags: cmd.Flags()})
			if err != nil {
				var ce *config.Error
				if errors.As(err, &ce) && ce.Key == "grace_period" {
					fmt.Fprintf(stdout, "verdict: FAIL: the drain budget does not fit its own grace period: %v\n", err)
					return &exitError{code: 1}
				}
				return &exitError{code: 2, msg: "check: " + err.Error()}
			}
			if !writeBudget(stdout, cfg, tgps) {
				return &exitError{code: 1}
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&tgps, "termination-grace-period", 30*time.Second, "the pod's terminationGracePeriodSeconds")
	config.BindFlags(cmd.Flags())
	return cmd
}

// writeBudget prints the budget and the verdict; it reports whether the
// budget fits.
func writeBudget(w io.Writer, cfg *config.Config, tgps time.Duration) bool {
	t := cfg.Timings
	// src annotates a value that did not come from the defaults.
	src := func(k string) string {
		if s := cfg.Source(k); s.Kind != config.FromDefault {
			return " (" + s.String() + ")"
		}
		return ""
	}
	need := t.PropagationMax + t.DrainTimeout + t.StopTimeout
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "window\tmin %s%s, quiet %s%s, max %s%s\tserve on after readiness fails: at least min, then until no request for quiet, at most max\n",
		t.PropagationMin, src("propagation.min"), t.PropagationQuiet, src("propagation.quiet"), t.PropagationMax, src("propagation.max"))
	fmt.Fprintf(tw, "drain\t%s%s\tin-flight work after the listeners close, then force-close\n", t.DrainTimeout, src("drain.timeout"))
	fmt.Fprintf(tw, "stop\t%s%s\tstop hooks\n", t.StopTimeout, src("stop.timeout"))
	fmt.Fprintf(tw, "margin\t%s\tdrainkit's slack for deregistration, scheduling and exit (10%% of grace_period, at least 1s)\n", t.Margin())
	fmt.Fprintf(tw, "total\t%s\tmax + drain + stop + margin: the longest a drain can take\n", need+t.Margin())
	fmt.Fprintf(tw, "grace\t%s%s\tgrace_period, the drain's whole budget\n", t.GracePeriod, src("grace_period"))
	fmt.Fprintf(tw, "pod\t%s\tterminationGracePeriodSeconds: SIGKILL after this\n", tgps)
	_ = tw.Flush()

	switch {
	case t.GracePeriod > tgps:
		fmt.Fprintf(w, "verdict: FAIL: grace_period %s is longer than terminationGracePeriodSeconds %s: the kubelet may SIGKILL the pod %s before the drain's budget runs out; set terminationGracePeriodSeconds to at least %d or lower grace_period\n",
			t.GracePeriod, tgps, t.GracePeriod-tgps, int((t.GracePeriod+time.Second-1)/time.Second))
		return false
	case t.PropagationMin == 0 && t.PropagationQuiet == 0 && t.PropagationMax == 0:
		fmt.Fprintf(w, "verdict: OK, with no propagation window: %s to spare inside grace_period; only right for a process nothing routes to through a load balancer or registry\n",
			t.GracePeriod-need-t.Margin())
	default:
		fmt.Fprintf(w, "verdict: OK: the longest drain (%s + margin %s) fits in grace_period %s with %s to spare, and grace_period fits in terminationGracePeriodSeconds %s\n",
			need, t.Margin(), t.GracePeriod, t.GracePeriod-need-t.Margin(), tgps)
	}
	return true
}
