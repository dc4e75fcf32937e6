package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/spf13/cobra"
)

// PodSlack is how much longer than grace_period terminationGracePeriodSeconds
// must be for an OK verdict (budget.PodSlack says why).
const PodSlack = budget.PodSlack

// Exit codes of `drainkit check`.
const (
	checkOK   = 0 // fits, with at least PodSlack to spare
	checkFail = 1 // does not fit
	checkWarn = 3 // fits, with less than PodSlack to spare
)

// verdictLevel is check's judgement of a budget.
type verdictLevel int

const (
	verdictOK verdictLevel = iota
	verdictWarn
	verdictFail
)

func (v verdictLevel) exitCode() int {
	switch v {
	case verdictOK:
		return checkOK
	case verdictWarn:
		return checkWarn
	}
	return checkFail
}

func newCheckCmd(stdout io.Writer) *cobra.Command {
	tgps := graceSeconds(30 * time.Second)
	var fromDrains string
	cmd := &cobra.Command{
		Use:   "check",
		Short: "print a configuration's drain budget and judge it against the pod's grace period",
		Long: `check loads the configuration the way the service does (--config file, DRAINKIT_*
variables, flags), prints the drain budget (propagation window, drain.timeout,
stop.timeout, margin, grace_period) and judges it against Kubernetes'
terminationGracePeriodSeconds: the kubelet sends SIGKILL that long after it started
terminating the pod, and a preStop hook's time counts against it, so the whole drain
(grace_period, counted from the drain's start) must fit inside it, with slack for
what happens outside the drain: the kubelet's clock starts before it execs the
preStop hook (which starts the drain), and after the drain the process must exit.
check asks for 5s of slack (terminationGracePeriodSeconds >= grace_period + 5s);
the defaults (grace_period 25s) are OK with Kubernetes' default of 30.
--termination-grace-period takes whole seconds as the manifest writes them (30)
or a duration (30s).

Verdicts and exit status:
  0  OK    terminationGracePeriodSeconds >= grace_period + 5s
  3  WARN  it fits grace_period, but with less than 5s of slack: a drain that
           uses its whole budget may be SIGKILLed while it exits
  1  FAIL  terminationGracePeriodSeconds < grace_period, or grace_period is shorter
           than its own budget (propagation.max + drain.timeout + stop.timeout +
           margin; the service would refuse to start)
  2  bad usage, or a configuration that does not load for any other reason
     (a value that does not parse or is out of its own range, an unreadable file)

A DRAINKIT_* variable that is no setting (most often a typo, such as
DRAINKIT_PROPAGATION_MNI) is named on stderr with the closest setting; it
does not change the verdict.

--from-drains DIR reads the last drains' evidence that a service with
propagation.evidence_dir DIR recorded (drainkit-window.json: each caller
class's staleness after the drain's start, and when it had moved), prints it,
proposes the propagation.max, grace_period and terminationGracePeriodSeconds
that would have covered it (never less than was measured), and judges the
configuration's propagation.max against it: FAIL (1) when it would not have
covered a drain, or a window was cut at propagation.max with callers still
due (their staleness is then a lower bound). The exit status is the worse of
that and the budget's verdict; no evidence in DIR is bad usage (2).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if tgps <= 0 {
				return &exitError{code: 2, msg: fmt.Sprintf("check: --termination-grace-period %s: must be > 0 (Kubernetes' default is 30)", time.Duration(tgps))}
			}
			warnEnv(cmd.ErrOrStderr(), "check")
			cfg, err := config.Load(config.Sources{Flags: cmd.Flags()})
			if err != nil {
				if budgetOverflow(err) {
					fmt.Fprintf(stdout, "verdict: FAIL: the drain does not fit its own grace period (the service would refuse to start): %v\n", err)
					return &exitError{code: checkFail}
				}
				return &exitError{code: 2, msg: "check: " + err.Error()}
			}
			var drains *drainsAdvice
			if fromDrains != "" {
				if drains, err = readDrainsAdvice(fromDrains, cfg.Timings); err != nil {
					return &exitError{code: 2, msg: "check: " + err.Error()}
				}
			}
			v := writeBudget(stdout, cfg, time.Duration(tgps))
			if drains != nil {
				v = max(v, drains.write(stdout, cfg.Timings))
			}
			if code := v.exitCode(); code != checkOK {
				return &exitError{code: code}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&fromDrains, "from-drains", "", "propose the window from the drains recorded under this propagation.evidence_dir (drainkit-window.json), and judge propagation.max against them")
	cmd.Flags().Var(&tgps, "termination-grace-period", "the pod's terminationGracePeriodSeconds: whole seconds as the manifest writes them (30) or a duration (30s)")
	config.BindFlags(cmd.Flags())
	return cmd
}

// graceSeconds is --termination-grace-period: a plain integer is seconds, as
// terminationGracePeriodSeconds is written in a manifest; anything else is a
// Go duration (30s, 1m).
type graceSeconds time.Duration

func (g *graceSeconds) String() string { return time.Duration(*g).String() }

func (g *graceSeconds) Type() string { return "seconds|duration" }

func (g *graceSeconds) Set(s string) error {
	maxSeconds := int64(budget.MaxDuration / time.Second)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 1 || n > maxSeconds {
			return fmt.Errorf("%d seconds is out of range 1..%d (Kubernetes' default is 30)", n, maxSeconds)
		}
		*g = graceSeconds(time.Duration(n) * time.Second)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("want whole seconds (30) or a duration (30s)")
	}
	if d <= 0 || d > budget.MaxDuration {
		return fmt.Errorf("%s is out of range: want > 0s and <= %s (Kubernetes' default is 30s)", d, budget.MaxDuration)
	}
	*g = graceSeconds(d)
	return nil
}

// budgetOverflow reports whether err is grace_period being shorter than
// propagation.max + drain.timeout + stop.timeout + margin, as opposed to a
// grace_period that is itself invalid (not a duration, <= 0, too long): a
// range error on grace_period whose value is within grace_period's own range.
func budgetOverflow(err error) bool {
	var ce *config.Error
	var re *budget.RangeError
	if !errors.As(err, &ce) || ce.Key != "grace_period" || !errors.As(err, &re) || re.Key != "grace_period" {
		return false
	}
	d, perr := time.ParseDuration(re.Value)
	return perr == nil && d > 0 && d <= budget.MaxDuration
}

// writeBudget prints the budget and the verdict, and returns the verdict.
func writeBudget(w io.Writer, cfg *config.Config, tgps time.Duration) verdictLevel {
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
	fmt.Fprintf(tw, "slack\t%s\tbefore the drain starts (the kubelet's exec of the preStop hook) and after it (process exit)\n", PodSlack)
	fmt.Fprintf(tw, "pod\t%s\tterminationGracePeriodSeconds: SIGKILL after this; want >= grace + slack = %s\n", tgps, t.GracePeriod+PodSlack)
	_ = tw.Flush()

	wantSecs := int((t.GracePeriod + PodSlack + time.Second - 1) / time.Second)
	fits := fmt.Sprintf("the longest drain (%s + margin %s) fits in grace_period %s with %s to spare", need, t.Margin(), t.GracePeriod, t.GracePeriod-need-t.Margin())
	if t.PropagationMin == 0 && t.PropagationQuiet == 0 && t.PropagationMax == 0 {
		fits += ", with no propagation window: only right for a process nothing routes to through a load balancer or registry"
	}
	switch {
	case t.GracePeriod > tgps:
		fmt.Fprintf(w, "verdict: FAIL: grace_period %s is longer than terminationGracePeriodSeconds %s: the kubelet may SIGKILL the pod %s before the drain's budget runs out; set terminationGracePeriodSeconds to at least %d (grace_period + %s slack) or lower grace_period\n",
			t.GracePeriod, tgps, t.GracePeriod-tgps, wantSecs, PodSlack)
		return verdictFail
	case t.GracePeriod+PodSlack > tgps:
		fmt.Fprintf(w, "verdict: WARN: %s, but terminationGracePeriodSeconds %s leaves only %s beyond it, less than the %s slack for the preStop hook's exec and the process exit: a drain that uses its whole budget may be SIGKILLed; set terminationGracePeriodSeconds to at least %d\n",
			fits, tgps, tgps-t.GracePeriod, PodSlack, wantSecs)
		return verdictWarn
	default:
		fmt.Fprintf(w, "verdict: OK: %s, and terminationGracePeriodSeconds %s leaves %s beyond grace_period (>= %s slack)\n",
			fits, tgps, tgps-t.GracePeriod, PodSlack)
		return verdictOK
	}
}

// warnEnv prints config.CheckEnv's warnings (a DRAINKIT_* variable that is
// no setting, most often a typo) to w, one line each prefixed by cmd, before
// the configuration loads: a typo is often why it does not.
func warnEnv(w io.Writer, cmd string) {
	for _, warning := range config.CheckEnv(nil) {
		fmt.Fprintf(w, "%s: warning: %s\n", cmd, warning)
	}
}
