package drill

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/textwidth"
)

// WriteTable writes the configuration, one table row per strategy, the
// events and the consumer telemetry, each strategy's verdict, then the
// result. By default every line fits textwidth.Columns: the tables leave
// their less needed columns to --wide (Config.Wide) and the prose is
// broken at spaces, its continuations indented (textwidth.Hang); with
// --wide nothing is left out or broken.
func WriteTable(w io.Writer, res *Result, sums []Summary) error {
	width, wide := textwidth.Width(res.Config.Wide), res.Config.Wide
	var b strings.Builder
	writeSetup(&b, res.Config)
	if _, err := io.WriteString(w, textwidth.Fit(b.String(), width, textwidth.Hang)); err != nil {
		return err
	}
	if err := writeRows(w, sums, wide); err != nil {
		return err
	}
	if err := writeEvents(w, sums, wide); err != nil {
		return err
	}
	if err := writeTelemetry(w, sums, wide); err != nil {
		return err
	}
	b.Reset()
	writeVerdicts(&b, sums)
	v := Judge(res, sums)
	if !v.Valid {
		fmt.Fprintf(&b, "\n%s\n", v.Reason)
	}
	fmt.Fprintf(&b, "\nwall time %.1fs; result: %s\n", res.Wall.Seconds(), resultWord(Passed(res, sums), v.Valid))
	_, err := io.WriteString(w, textwidth.Fit(b.String(), width, textwidth.Hang))
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

// writeRows writes the table, one row per strategy, and the legend of its
// columns. The default table fits 120 columns: it leaves out
// WRITTEN+UNANSWERED, EJECTIONS and FAILURE KINDS (the kinds follow the
// table); wide keeps them as columns. "-" stands where nothing was
// measured: no drain (a SIGKILL, or a run that did not get so far), no
// request reaching a stopped replica.
func writeRows(w io.Writer, sums []Summary, wide bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if wide {
		fmt.Fprintln(tw, "SCENARIO\tSTRATEGY\tCONSUMER\tREQUESTS\tFAILED\tWRITTEN+UNANSWERED\tRESENT\tEJECTIONS\tFAILURE KINDS\tDRAIN MEDIAN\tDRAIN MAX\tLATE ARRIVALS\tSTALENESS")
	} else {
		fmt.Fprintln(tw, "SCENARIO\tSTRATEGY\tCONSUMER\tREQUESTS\tFAILED\tRESENT\tDRAIN MEDIAN\tDRAIN MAX\tLATE\tSTALENESS")
	}
	var under []string // the default table's failure kinds
	for _, s := range sums {
		cells := []string{s.Scenario, s.Name, s.Consumer}
		kinds := "-"
		switch {
		case s.Requests == 0:
			// Nothing was sent: no row of zeros that reads like a result.
			kinds = "did not run: see below"
		case s.Failed > 0:
			kinds = kindList(s.FailuresByKind)
		}
		if !wide && s.Requests == 0 {
			under = append(under, fmt.Sprintf("%s %s: %s", s.Scenario, s.Name, kinds))
		} else if !wide && kinds != "-" {
			under = append(under, fmt.Sprintf("%s %s: failure kinds %s", s.Scenario, s.Name, kinds))
		}
		requests, failed, written, resent, ejections := "-", "-", "-", "-", "-"
		if s.Requests > 0 {
			requests, failed, written, resent = strconv.Itoa(s.Requests), strconv.Itoa(s.Failed), strconv.Itoa(s.WrittenUnanswered), strconv.Itoa(s.Resent)
			ejections = strconv.FormatInt(s.Ejections, 10)
		}
		if wide {
			cells = append(cells, requests, failed, written, resent, ejections, kinds)
		} else {
			cells = append(cells, requests, failed, resent)
		}
		late, drainMedian, drainMax, staleness := "-", "-", "-", "-"
		if s.LateReportedBy > 0 && s.Requests > 0 {
			late = strconv.FormatInt(s.LateRequests, 10)
		}
		if len(s.DrainSeconds) > 0 && s.Requests > 0 {
			drainMedian, drainMax = seconds(s.DrainMedianSeconds), seconds(s.DrainMaxSeconds)
		}
		if s.stalenessMeasured && s.Requests > 0 {
			staleness = seconds(s.StalenessSeconds)
		}
		fmt.Fprintln(tw, strings.Join(append(cells, drainMedian, drainMax, late, staleness), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	for _, l := range under {
		b.WriteString(textwidth.FitLine(l, textwidth.Columns, textwidth.Hang) + "\n")
	}
	b.WriteString(tableLegend(wide))
	_, err := io.WriteString(w, b.String())
	return err
}

// seconds renders a measured duration in seconds as the tables do: "1.25s".
func seconds(s float64) string { return strconv.FormatFloat(s, 'f', 2, 64) + "s" }

// tableLegend explains the columns of writeRows' table, at most 120
// columns wide.
func tableLegend(wide bool) string {
	parts := []string{"columns: REQUESTS sent by the load;", "FAILED of them (no answer, or an error status);"}
	if wide {
		parts = append(parts, "WRITTEN+UNANSWERED failed after the request was written (the server may have run it);")
	}
	parts = append(parts, "RESENT requests a consumer sent more than once (the consumer telemetry's retries count the extra attempts);")
	if wide {
		parts = append(parts, "EJECTIONS instances the consumers ejected locally;", "FAILURE KINDS the failures by cause;")
	}
	late := "LATE"
	if wide {
		late = "LATE ARRIVALS"
	}
	parts = append(parts, "DRAIN MEDIAN, DRAIN MAX from an old replica's stop signal to its exit;",
		late+" requests a replica got after its propagation window ended;",
		"STALENESS the latest a consumer still sent to a replaced replica, from its stop;",
		"- where nothing was measured (no drain, as after SIGKILL; no request after a stop).")
	if !wide {
		parts = append(parts, "--wide adds WRITTEN+UNANSWERED, EJECTIONS and FAILURE KINDS.")
	}
	return textwidth.Legend(parts)
}

// writeEvents writes one row per fault, its instants in seconds from the
// run's start, and the legend of its columns. The default table fits
// textwidth.Columns: it gives the instants without their revisions, an
// added replica's first request with the count sent before its READY, and
// the failures from the fault in one sum; wide (Config.Wide) adds the
// revisions, READY and the failures per second.
func writeEvents(w io.Writer, sums []Summary, wide bool) error {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	if wide {
		b.WriteString("\nevents (seconds from the run's start; failures per second from the fault to the last instant):\n")
		fmt.Fprintln(tw, "SCENARIO\tSTRATEGY\tREPLICA\tFAULT\tAT\tREGISTRY DECISION\tFIRST CONSUMER VIEW WITHOUT (start: WITH)\tLAST REQUEST TO OLD ADDRESS (start: TO NEW)\tFIRST EJECTION\tFAILURES/S")
	} else {
		b.WriteString("\nevents (seconds from the run's start):\n")
		fmt.Fprintln(tw, "SCENARIO\tSTRATEGY\tREPLICA\tFAULT\tAT\tREGISTRY\tVIEW\tLAST REQUEST\tEJECTION\tFAILED")
	}
	for _, s := range sums {
		for _, e := range s.Events {
			if wide {
				fmt.Fprintf(tw, "%s\t%s\tr%d\t%s\t%.2f\t%s\t%s\t%s\t%s\t%s\n", s.Scenario, s.Name, e.Replica, e.Kind, e.FaultSeconds,
					revisioned(e.RegistryDecisionSeconds, e.RegistryRevision), revisioned(e.ConsumerViewSeconds, e.ConsumerRevision),
					e.AddressRequests(), instant(e.EjectionSeconds), perSecondList(e.FailuresPerSecond))
				continue
			}
			address := instant(e.LastSentSeconds)
			if e.Added {
				address = fmt.Sprintf("%s (%d early)", instant(e.FirstSentSeconds), e.EarlyRequests)
			}
			fmt.Fprintf(tw, "%s\t%s\tr%d\t%s\t%.2f\t%s\t%s\t%s\t%s\t%d\n", s.Scenario, s.Name, e.Replica, e.Kind, e.FaultSeconds,
				instant(e.RegistryDecisionSeconds), instant(e.ConsumerViewSeconds), address, instant(e.EjectionSeconds), e.Failed)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString(eventsLegend(wide))
	_, err := io.WriteString(w, b.String())
	return err
}

// eventsLegend explains the columns of writeEvents' table.
func eventsLegend(wide bool) string {
	registry, view, ejection := "REGISTRY", "VIEW", "EJECTION"
	if wide {
		registry, view, ejection = "REGISTRY DECISION", "FIRST CONSUMER VIEW", "FIRST EJECTION"
	}
	parts := []string{"columns: FAULT what the drill did to REPLICA (start: a replica it added), AT when;",
		registry + " the discovery's first answer without the replica (probes dropping it, the registry's watch delivering its removal);",
		view + " the first consumer view without it (start: with it);"}
	if wide {
		parts = append(parts, "(rev N) the answer's or the view's revision (Consul's index, etcd's revision, the probes' change count);",
			"LAST REQUEST the last request sent to the old address (start: the first to the new one, its READY, and the requests sent before it);",
			ejection+" a consumer's first ejection after the fault;",
			"FAILURES/S the failed requests in each second from the fault to the last instant;")
	} else {
		parts = append(parts, "LAST REQUEST the last request sent to the old address (start: the first to the new one, and how many were sent before its READY);",
			ejection+" a consumer's first ejection after the fault;",
			"FAILED the requests failed from the fault to the last instant;")
	}
	parts = append(parts, "- where nothing happened.")
	if !wide {
		parts = append(parts, "--wide adds the revisions, READY and the failures per second.")
	}
	return textwidth.Legend(parts)
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
		writeWindowWarnings(b, s)
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
