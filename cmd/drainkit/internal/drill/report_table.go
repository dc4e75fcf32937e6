package drill

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
)

// WriteTable writes the configuration, one table row per strategy and each
// strategy's verdict, then the result.
func WriteTable(w io.Writer, res *Result, sums []Summary) error {
	var b strings.Builder
	writeSetup(&b, res.Config)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if err := writeRows(w, sums); err != nil {
		return err
	}
	if err := writeEvents(w, sums); err != nil {
		return err
	}
	if err := writeTelemetry(w, sums); err != nil {
		return err
	}
	b.Reset()
	writeVerdicts(&b, sums)
	v := Judge(res, sums)
	if !v.Valid {
		fmt.Fprintf(&b, "\n%s\n", v.Reason)
	}
	fmt.Fprintf(&b, "\nwall time %.1fs; result: %s\n", res.Wall.Seconds(), resultWord(Passed(res, sums), v.Valid))
	_, err := io.WriteString(w, b.String())
	return err
}

func resultWord(pass, valid bool) string {
	if !valid {
		return "INVALID"
	}
	if pass {
		return "PASS"
	}
	return "FAIL"
}

// writeSetup describes the drill: load, consumers, discovery, span, restart
// and the replicas' timings with where each came from.
func writeSetup(b *strings.Builder, cfg Config) {
	fmt.Fprintf(b, "drainkit drill: %d replicas per strategy, %g requests/s from %d %s consumers, %s with a %s timeout\n",
		cfg.Replicas, cfg.Rate, cfg.Consumers, cfg.ConsumerKind, cfg.target(), cfg.RequestTimeout)
	if cfg.Consul != "" {
		fmt.Fprintf(b, "discovery: consul watch on %s\n", cfg.Consul)
	} else if cfg.Etcd != "" {
		fmt.Fprintf(b, "discovery: etcd watch on %s\n", cfg.Etcd)
	} else if cfg.Nacos != "" {
		fmt.Fprintf(b, "discovery: nacos on %s: %s\n", cfg.Nacos, cfg.nacosDiscovery())
	} else {
		fmt.Fprintf(b, "discovery: GET /readyz every %s, dropped after %d failures (like a Kubernetes endpoints controller)\n",
			cfg.DiscoveryInterval, cfg.FailureThreshold)
	}
	if cfg.ConsumerCache > 0 {
		fmt.Fprintf(b, "consumer cache: %s (each consumer reuses a discovery result this long)\n", cfg.ConsumerCache)
	}
	if cfg.Sequential {
		fmt.Fprintf(b, "load: %s before the rolling restart; after it at least %s, then until no consumer lists a replaced replica (at most %s more); strategies one after another (--sequential), each with the whole machine, times from its own start\n",
			cfg.Baseline, cfg.Tail, cfg.StaleWait())
	} else {
		fmt.Fprintf(b, "load: %s before the rolling restart; after it at least %s, then until no consumer lists a replaced replica (at most %s more) and every strategy is done: all strategies send over the same span\n",
			cfg.Baseline, cfg.Tail, cfg.StaleWait())
	}
	if cfg.PreStop {
		b.WriteString("restart: preStop POST /drain?wait=propagation on the old replica, then SIGTERM when it returns (like the kubelet with `drainkit prestop`)\n")
	} else {
		b.WriteString("restart: SIGTERM (kill: SIGKILL) to the old replica once its replacement is listed\n")
	}
	if slices.Contains(cfg.Strategies, StrategyOfflineKill) && cfg.Exec == "" {
		fmt.Fprintf(b, "offline-kill: %s\n", cfg.offlineKillRestart())
	}
	var tparts []string
	tm := cfg.timings()
	for _, k := range sortedTimingKeys(tm) {
		p := k + "=" + tm[k].String()
		if src := cfg.TimingSources[k]; src != "" && src != "default" {
			p += " (" + src + ")"
		}
		tparts = append(tparts, p)
	}
	fmt.Fprintf(b, "replica timings (DRAINKIT_*): %s\n\n", strings.Join(tparts, ", "))
}

// writeRows writes the table, one row per strategy.
func writeRows(w io.Writer, sums []Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tSTRATEGY\tCONSUMER\tREQUESTS\tFAILED\tWRITTEN+UNANSWERED\tRETRIED\tEJECTIONS\tFAILURE KINDS\tDRAIN MEDIAN\tDRAIN MAX\tLATE ARRIVALS\tSTALENESS")
	for _, s := range sums {
		late := "-"
		if s.LateReportedBy > 0 {
			late = fmt.Sprintf("%d", s.LateRequests)
		}
		kinds := "-"
		if s.Failed > 0 {
			kinds = kindList(s.FailuresByKind)
		}
		if s.Requests == 0 {
			// Nothing was sent: no row of zeros that reads like a result.
			fmt.Fprintf(tw, "%s\t%s\t%s\t-\t-\t-\t-\t-\tdid not run: see below\t-\t-\t-\t-\n", s.Scenario, s.Name, s.Consumer)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%s\t%.2fs\t%.2fs\t%s\t%.2fs\n",
			s.Scenario, s.Name, s.Consumer, s.Requests, s.Failed, s.WrittenUnanswered, s.Retried, s.Ejections, kinds,
			s.DrainMedianSeconds, s.DrainMaxSeconds, late, s.StalenessSeconds)
	}
	return tw.Flush()
}

// writeEvents writes one row per fault: its four instants in seconds from
// the run's start, the first ejection and the failures per second from the
// fault.
func writeEvents(w io.Writer, sums []Summary) error {
	if _, err := io.WriteString(w, "\nevents (seconds from the run's start; failures per second from the fault to the last instant):\n"); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tSTRATEGY\tREPLICA\tFAULT\tAT\tREGISTRY DECISION\tFIRST CONSUMER VIEW WITHOUT (start: WITH)\tLAST REQUEST TO OLD ADDRESS (start: TO NEW)\tFIRST EJECTION\tFAILURES/S")
	for _, s := range sums {
		for _, e := range s.Events {
			fmt.Fprintf(tw, "%s\t%s\tr%d\t%s\t%.2f\t%s\t%s\t%s\t%s\t%s\n", s.Scenario, s.Name, e.Replica, e.Kind, e.FaultSeconds,
				revisioned(e.RegistryDecisionSeconds, e.RegistryRevision), revisioned(e.ConsumerViewSeconds, e.ConsumerRevision),
				e.AddressRequests(), instant(e.EjectionSeconds), perSecondList(e.FailuresPerSecond))
		}
	}
	return tw.Flush()
}

// perSecondList renders failures per second as "0 12 3".
func perSecondList(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, " ")
}

// writeVerdicts writes each strategy's verdict and its notes.
func writeVerdicts(b *strings.Builder, sums []Summary) {
	b.WriteString("\n")
	for _, s := range sums {
		fmt.Fprintf(b, "%s %s: %s\n", s.Scenario, s.Name, s.Verdict)
		writeDeaths(b, s.Deaths)
		if s.PreStopCalls > 0 {
			fmt.Fprintf(b, "  preStop: %s, median %.2fs", plural(int64(s.PreStopCalls), "call", "calls"), s.PreStopMedianSeconds)
			if s.PreStopFailed > 0 {
				fmt.Fprintf(b, "; %d failed (%s), and SIGTERM followed at once as the kubelet does", s.PreStopFailed, s.PreStopError)
			}
			b.WriteString("\n")
		}
		if s.LateSends > 0 {
			was := "were"
			if s.LateSends == 1 {
				was = "was"
			}
			fmt.Fprintf(b, "  note: %s %s sent more than 20 ms behind schedule (max %.0f ms): the machine was busy\n",
				plural(s.LateSends, "request", "requests"), was, s.MaxLagMs)
		}
	}
}

// timingOrder is the order the timings are listed in: the order of a drain.
func timingOrder(k string) int {
	for i, o := range []string{"warmup.timeout", "propagation.min", "propagation.quiet", "propagation.max", "drain.timeout", "stop.timeout", "grace_period"} {
		if o == k {
			return i
		}
	}
	return 99
}

func sortedTimingKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return timingOrder(keys[i]) < timingOrder(keys[j]) })
	return keys
}
