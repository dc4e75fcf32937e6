package drill

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the configuration, one table row per strategy and each
// strategy's verdict.
func WriteTable(w io.Writer, res *Result, sums []Summary) error {
	c := res.Config.Report()
	var b strings.Builder
	fmt.Fprintf(&b, "drainkit drill: %d replicas per strategy, %g requests/s from %d consumers, GET / with a %s timeout\n",
		c.Replicas, c.Rate, c.Consumers, c.RequestTimeout)
	if res.Config.Consul != "" {
		fmt.Fprintf(&b, "discovery: consul watch on %s\n", res.Config.Consul)
	} else {
		fmt.Fprintf(&b, "discovery: GET /readyz every %s, dropped after %d failures (like a Kubernetes endpoints controller)\n",
			c.DiscoveryInterval, c.FailureThreshold)
	}
	if res.Config.ConsumerCache > 0 {
		fmt.Fprintf(&b, "consumer cache: %s (each consumer reuses a discovery result this long)\n", c.ConsumerCache)
	}
	fmt.Fprintf(&b, "load: %s before the rolling restart; after it at least %s, then until no consumer lists a replaced replica (at most %s more) and every strategy is done: all strategies send over the same span\n",
		c.Baseline, c.Tail, c.StaleWait)
	if c.PreStop {
		b.WriteString("restart: preStop POST /drain?wait=propagation on the old replica, then SIGTERM when it returns (like the kubelet with `drainkit prestop`)\n")
	} else {
		b.WriteString("restart: SIGTERM to the old replica once its replacement is listed\n")
	}
	keys := make([]string, 0, len(c.Timings))
	for k := range c.Timings {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return timingOrder(keys[i]) < timingOrder(keys[j]) })
	var tparts []string
	for _, k := range keys {
		p := k + "=" + c.Timings[k]
		if src := c.TimingSources[k]; src != "" && src != "default" {
			p += " (" + src + ")"
		}
		tparts = append(tparts, p)
	}
	fmt.Fprintf(&b, "replica timings (DRAINKIT_*): %s\n\n", strings.Join(tparts, ", "))
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STRATEGY\tREQUESTS\tFAILED\tFAILURE KINDS\tDRAIN MEDIAN\tDRAIN MAX\tLATE ARRIVALS\tSTALENESS")
	for _, s := range sums {
		late := "-"
		if s.LateReportedBy > 0 {
			late = fmt.Sprintf("%d", s.LateRequests)
		}
		kinds := "-"
		if s.Failed > 0 {
			kinds = kindList(s.FailuresByKind)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%.2fs\t%.2fs\t%s\t%.2fs\n",
			s.Name, s.Requests, s.Failed, kinds, s.DrainMedianSeconds, s.DrainMaxSeconds, late, s.StalenessSeconds)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.Reset()
	b.WriteString("\n")
	for _, s := range sums {
		fmt.Fprintf(&b, "%s: %s\n", s.Name, s.Verdict)
		if s.PreStopCalls > 0 {
			fmt.Fprintf(&b, "  preStop: %s, median %.2fs", plural(int64(s.PreStopCalls), "call", "calls"), s.PreStopMedianSeconds)
			if s.PreStopFailed > 0 {
				fmt.Fprintf(&b, "; %d failed (%s), and SIGTERM followed at once as the kubelet does", s.PreStopFailed, s.PreStopError)
			}
			b.WriteString("\n")
		}
		if s.LateSends > 0 {
			was := "were"
			if s.LateSends == 1 {
				was = "was"
			}
			fmt.Fprintf(&b, "  note: %s %s sent more than 20 ms behind schedule (max %.0f ms): the machine was busy\n",
				plural(s.LateSends, "request", "requests"), was, s.MaxLagMs)
		}
	}
	fmt.Fprintf(&b, "\nwall time %.1fs; ", res.Wall.Seconds())
	if Passed(res, sums) {
		b.WriteString("result: PASS\n")
	} else {
		b.WriteString("result: FAIL\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func timingOrder(k string) int {
	for i, o := range []string{"warmup.timeout", "propagation.min", "propagation.quiet", "propagation.max", "drain.timeout", "stop.timeout", "grace_period"} {
		if o == k {
			return i
		}
	}
	return 99
}
