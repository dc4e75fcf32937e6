package drill

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
)

// Summary is one strategy's numbers and verdict, as the table, the JSON and
// the HTML report show them. Every JSON key of a duration or a time ends in
// its unit: _s for seconds, _ms for milliseconds (times are offsets from
// the drill's start).
type Summary struct {
	// Scenario is the scenario the run rehearsed (ScenarioRolling, ...).
	Scenario string `json:"scenario"`
	Name     string `json:"name"`
	// Consumer is the consumers' kind (Config.ConsumerKind).
	Consumer string `json:"consumer"`
	Requests int    `json:"requests"`
	Failed   int    `json:"failed"`
	// Resent counts the requests a consumer sent more than once (each
	// once, however often it was sent; the consumer telemetry's retries
	// count the extra attempts instead); Ejections the instances the
	// consumers ejected locally.
	Resent    int   `json:"resent_requests"`
	Ejections int64 `json:"ejections"`
	// Retries sums the extra attempts the consumers reported per request
	// (a request sent three times counts 2).
	Retries int `json:"retries"`
	// ConsumerTelemetry is what the consumers' OpenTelemetry instruments
	// counted (the drainkit kind only), to compare with the above.
	ConsumerTelemetry *ConsumerTelemetry `json:"consumer_telemetry,omitempty"`
	// WrittenUnanswered counts the requests that had been written to a
	// replaced (dying) replica and were not answered by it: the only ones
	// that may have reached a server, so a consumer that resends only what
	// provably never did fails at most this many non-idempotent requests.
	WrittenUnanswered int `json:"written_unanswered"`
	// ViewAgeMaxMs is the oldest view a consumer picked an instance from,
	// as the consumer reported it (0 for a consumer that does not know).
	ViewAgeMaxMs float64 `json:"view_age_max_ms"`
	// FailuresByKind counts failures by Outcome name ("refused", "reset",
	// "eof", "timeout", "5xx", "no_endpoint", "other"); FailureExamples has
	// one error text per kind.
	FailuresByKind  map[string]int    `json:"failures_by_kind"`
	FailureExamples map[string]string `json:"failure_examples,omitempty"`
	// DrainSeconds is, per replica the rolling restart replaced, the time
	// from SIGTERM (with --prestop: from the preStop call) to its exit, in
	// replacement order.
	DrainSeconds       []float64 `json:"drain_s"`
	DrainMedianSeconds float64   `json:"drain_median_s"`
	DrainMaxSeconds    float64   `json:"drain_max_s"`
	// LateRequests sums the late arrivals (requests that arrived after the
	// drain began) that the replaced replicas reported; LateReportedBy says
	// how many of them reported a drain timeline at all.
	LateRequests   int64 `json:"late_requests"`
	LateReportedBy int   `json:"late_reported_by"`
	// LastLateArrivalSeconds is the latest late arrival any replica reported,
	// from its drain's start; WindowSeconds the longest propagation window
	// (drain start to listeners closed) a replica reported.
	LastLateArrivalSeconds float64 `json:"last_late_arrival_s"`
	WindowSeconds          float64 `json:"window_s"`
	// StalenessSeconds is the consumers' staleness as the drill measured it:
	// the longest time from a replica's SIGTERM (with --prestop: the preStop
	// call) to the last request a consumer sent it.
	StalenessSeconds float64 `json:"consumer_staleness_s"`
	// StalenessCut is true when some consumer still listed a replaced
	// replica (StillListed) when the load stopped: the staleness and the
	// failures are then lower bounds.
	StalenessCut bool `json:"consumer_staleness_cut"`
	// stalenessMeasured is true when some replaced replica got a request
	// after its stop began, so that StalenessSeconds is a measurement.
	stalenessMeasured bool
	StillListed       []int `json:"still_listed_when_load_stopped,omitempty"`
	// LoadStartSeconds and LoadEndSeconds bound the load, in seconds from
	// the drill's start (the same for every strategy of a drill).
	LoadStartSeconds float64 `json:"load_start_s"`
	LoadEndSeconds   float64 `json:"load_end_s"`
	// PreStopCalls counts the preStop calls (POST /drain?wait=propagation)
	// of a --prestop drill, PreStopFailed those that did not answer 200;
	// PreStopMedianSeconds is the median time a call took and PreStopError
	// one failure's text.
	PreStopCalls         int     `json:"prestop_calls,omitempty"`
	PreStopFailed        int     `json:"prestop_failed,omitempty"`
	PreStopMedianSeconds float64 `json:"prestop_median_s,omitempty"`
	PreStopError         string  `json:"prestop_error,omitempty"`
	// Events are the scenario's faults with their four instants.
	Events []EventSummary `json:"events"`
	// Budget is how many failures the scenario allows (ScenarioKill: the
	// requests written to the killed replica and unanswered), BudgetReason
	// what it counts; null when none may fail.
	Budget       *int   `json:"failure_budget"`
	BudgetReason string `json:"failure_budget_reason,omitempty"`
	// EjectionBoundSeconds is, for the slow-probe scenario, how long after
	// the check blocked the discovery must have dropped the instance (from
	// checks.* and the discovery's settings).
	EjectionBoundSeconds float64 `json:"ejection_bound_s,omitempty"`
	// OutageStartSeconds and OutageEndSeconds bound the registry-outage
	// scenario's outage (omitted otherwise).
	OutageStartSeconds *float64 `json:"registry_outage_start_s,omitempty"`
	OutageEndSeconds   *float64 `json:"registry_outage_end_s,omitempty"`
	// LateConsumers are the registry-outage scenario's consumers started
	// during the outage, with a last-good snapshot and without.
	LateConsumers []LateConsumerSummary `json:"late_consumers,omitempty"`
	// BadPush is what ScenarioBadPush's proxy did and what reached the
	// consumers; Zones ScenarioZoneLoss's findings (omitted otherwise).
	BadPush *BadPushSummary `json:"bad_push,omitempty"`
	Zones   *ZoneSummary    `json:"zone_loss,omitempty"`
	// Brownout is the brownout scenario's amplification and capacity
	// figures; Streams the long-lived scenario's streams by kind (both
	// omitted otherwise).
	Brownout *BrownoutSummary `json:"brownout,omitempty"`
	Streams  []StreamSummary  `json:"streams,omitempty"`
	// Pass is true when no request failed (or no more than Budget) and the
	// run completed; for the
	// drainkit strategy, also every replaced replica exited 0.
	Pass bool `json:"pass"`
	// UncleanExits lists the drainkit strategy's replaced replicas that did
	// not exit 0, with how they ended.
	UncleanExits []string `json:"unclean_exits,omitempty"`
	Verdict      string   `json:"verdict"`
	// WindowWarnings are the replicas' warnings of a propagation window
	// cut at propagation.max while consumers still sent, naming the
	// callers (omitted without).
	WindowWarnings []WindowWarning `json:"window_warnings,omitempty"`
	// Deaths are the replicas that ended without the drill stopping them.
	Deaths   []ReplicaDeath `json:"replicas_died,omitempty"`
	Error    string         `json:"error,omitempty"`
	Seconds  float64        `json:"duration_s"`
	MaxLagMs float64        `json:"pacing_max_lag_ms"`
	// LateSends counts requests the load generator sent more than 20 ms
	// behind schedule (a loaded machine).
	LateSends int64            `json:"pacing_late_sends"`
	Replicas  []ReplicaSummary `json:"replicas"`
}

// ReplicaSummary is one replica in the JSON output; times (_s) in seconds
// from the drill's start, null when it did not happen.
type ReplicaSummary struct {
	ID      int      `json:"id"`
	Role    string   `json:"role"`
	Addr    string   `json:"addr"`
	Started *float64 `json:"started_s"`
	Ready   *float64 `json:"ready_s"`
	PreStop *float64 `json:"prestop_at_s,omitempty"`
	// Offline is when the operator marked it offline in Nacos
	// (offline-kill).
	Offline    *float64 `json:"offline_at_s,omitempty"`
	SIGTERM    *float64 `json:"signalled_s"`
	Signal     string   `json:"signal,omitempty"` // SIGTERM or SIGKILL
	Exited     *float64 `json:"exited_s"`
	ExitCode   int      `json:"exit_code"`
	ExitStatus string   `json:"exit_status"`
	Killed     bool     `json:"killed,omitempty"`
	Requests   int      `json:"requests"`
	Failed     int      `json:"failed"`
	Late       *int64   `json:"late_arrivals"`
	// Steps are the replica's drain steps (lifecycle.StepNotReady, ...) in
	// seconds from its drain's start t0, not from the drill's start;
	// StepErrors the failed steps' errors.
	Steps      map[string]float64 `json:"steps_s,omitempty"`
	StepErrors map[string]string  `json:"step_errors,omitempty"`
	// LastSentSeconds is the last request a consumer sent this replica,
	// from its SIGTERM or preStop call (null if never stopped or no request
	// after it).
	LastSentSeconds *float64 `json:"last_sent_after_stop_s"`
	// PreStopSeconds is how long the preStop call took, PreStopError why it
	// failed.
	PreStopSeconds *float64 `json:"prestop_took_s,omitempty"`
	PreStopError   string   `json:"prestop_error,omitempty"`
	// StillListed is true when a consumer still listed this replica when
	// the load stopped.
	StillListed bool `json:"still_listed_when_load_stopped,omitempty"`
}

func secs(d time.Duration) float64 { return float64(d.Round(time.Millisecond)) / float64(time.Second) }

func optSecs(d time.Duration) *float64 {
	if d < 0 {
		return nil
	}
	v := secs(d)
	return &v
}

// Summarize computes run's numbers and verdict under cfg: the requests
// (counts, kinds, retries, what the dying replicas were sent), the replicas
// (drains, preStop calls, their drain timelines), then the verdict.
func Summarize(cfg Config, run StrategyRun) Summary {
	s := newSummary(run)
	reqs := s.countRequests(run)
	rs := s.addReplicas(cfg, run, reqs)
	s.Events = summarizeEvents(run)
	s.BadPush, s.Zones = summarizeBadPush(run), summarizeZones(cfg, run)
	s.Streams = run.Streams
	if run.Scenario == ScenarioBrownout {
		s.Brownout = brownoutFigures(cfg, run, s.Requests)
	}
	allowed := 0
	if sc, ok := scenarioNamed(run.Scenario); ok && sc.budget != nil {
		n, why := sc.budget(s)
		s.Budget, s.BudgetReason, allowed = &n, why, n
	}
	early := 0
	for _, e := range s.Events {
		early += e.EarlyRequests
	}
	s.Pass = s.Failed <= allowed && early == 0 && run.Err == nil && s.Requests > 0
	if run.Scenario == ScenarioSlowProbe {
		s.EjectionBoundSeconds = secs(cfg.ejectionBound())
		s.Pass = s.Pass && (cfg.Exec != "" || droppedWithin(s.Events, s.EjectionBoundSeconds))
	}
	if run.Scenario == ScenarioOutage {
		s.Pass = s.Pass && lateConsumersOK(run.LateConsumers)
	}
	if s.BadPush != nil {
		s.Pass = s.Pass && s.BadPush.SentAfterExit == 0
	}
	s.Pass = s.Pass && zonesHeld(s.Zones)
	if s.Brownout != nil {
		s.Pass = s.Pass && s.Brownout.BudgetHeld
	}
	if run.Scenario == ScenarioLongLived {
		s.Pass = s.Pass && streamsDrained(s.Streams)
	}
	s.Verdict = verdict(cfg, run, s, rs.windowCut)
	s.WindowWarnings = windowWarnings(run)
	s.judgeExits(run, rs.unclean)
	return s
}

// newSummary fills in what run says directly.
func newSummary(run StrategyRun) Summary {
	s := Summary{
		Scenario:       run.Scenario,
		Name:           run.Name,
		Consumer:       run.Consumer,
		Ejections:      run.Ejections,
		FailuresByKind: map[string]int{},
		DrainSeconds:   []float64{},
		Seconds:        secs(run.Duration),
		MaxLagMs:       float64(run.MaxLag.Microseconds()) / 1000,
		LateSends:      run.LateSends,
		Replicas:       []ReplicaSummary{},
		StillListed:    run.StillListed,
		StalenessCut:   len(run.StillListed) > 0,
		Deaths:         run.Deaths,

		LoadStartSeconds: secs(run.LoadStart),
		LoadEndSeconds:   secs(run.LoadEnd),
	}
	s.ConsumerTelemetry = run.Telemetry
	if run.Err != nil {
		s.Error = run.Err.Error()
	}
	if run.hadOutage() {
		s.OutageStartSeconds, s.OutageEndSeconds = optSecs(run.OutageStart), optSecs(run.OutageEnd)
		s.LateConsumers = summarizeLate(run.LateConsumers)
	}
	return s
}

// requestTally is what the records say per replica.
type requestTally struct {
	requests, failed map[int]int
	lastSent         map[int]time.Duration
}

// countRequests counts the requests, failures by kind (with one example
// each), retried requests, the requests written to a replaced replica and
// not answered, and the largest view age; it returns the per-replica tally.
func (s *Summary) countRequests(run StrategyRun) requestTally {
	rolled := map[int]bool{} // the replicas the scenario stopped or hit
	for _, rp := range run.Replicas {
		rolled[rp.ID] = rp.Rolled || rp.Faulted
	}
	t := requestTally{requests: map[int]int{}, failed: map[int]int{}, lastSent: map[int]time.Duration{}}
	examples := map[string]string{}
	for _, r := range run.Records {
		s.Requests++
		t.requests[r.Replica]++
		if r.Retries > 0 {
			s.Resent++
		}
		s.Retries += r.Retries
		if rolled[r.Unanswered] {
			s.WrittenUnanswered++
		}
		s.ViewAgeMaxMs = max(s.ViewAgeMaxMs, float64(r.ViewAge.Microseconds())/1000)
		if r.Sent > t.lastSent[r.Replica] {
			t.lastSent[r.Replica] = r.Sent
		}
		if !r.Outcome.Failed() {
			continue
		}
		s.Failed++
		t.failed[r.Replica]++
		k := r.Outcome.String()
		s.FailuresByKind[k]++
		if _, ok := examples[k]; !ok {
			examples[k] = r.Err
		}
	}
	if len(examples) > 0 {
		s.FailureExamples = examples
	}
	return t
}

// replicaFindings are what the replicas' reports say beyond their rows.
type replicaFindings struct {
	windowCut []string // replicas whose window closed while late arrivals still came
	unclean   []string // replaced replicas that did not exit 0
}

// addReplicas adds a row per replica and, over the replaced ones, the
// drain times, preStop calls, staleness and what their timelines say.
func (s *Summary) addReplicas(cfg Config, run StrategyRun, t requestTally) replicaFindings {
	var f replicaFindings
	var drains, preStops []float64
	for _, rp := range run.Replicas {
		rs := replicaSummary(run, rp, t)
		s.Replicas = append(s.Replicas, rs)
		if rp.PreStop >= 0 {
			preStops = append(preStops, secs(rp.PreStopTook))
			s.notePreStop(rp)
		}
		if !rp.Rolled {
			continue
		}
		if rp.Killed || rp.Exited >= 0 && rp.ExitCode != 0 {
			f.unclean = append(f.unclean, fmt.Sprintf("r%d (%s)", rp.ID, rp.ExitStatus))
		}
		if stop := rp.StopStart(); stop >= 0 && rp.Exited >= 0 {
			drains = append(drains, secs(rp.Exited-stop))
		}
		if rs.LastSentSeconds != nil {
			s.stalenessMeasured = true
			s.StalenessSeconds = max(s.StalenessSeconds, *rs.LastSentSeconds)
		}
		if s.noteTimeline(cfg, rp) {
			f.windowCut = append(f.windowCut, fmt.Sprintf("r%d", rp.ID))
		}
	}
	s.DrainSeconds = drains
	if len(drains) > 0 {
		s.DrainMedianSeconds = median(drains)
		s.DrainMaxSeconds = slices.Max(drains)
	}
	if len(preStops) > 0 {
		s.PreStopMedianSeconds = median(preStops)
	}
	return f
}

// replicaSummary is one replica's row.
func replicaSummary(run StrategyRun, rp ReplicaReport, t requestTally) ReplicaSummary {
	rs := ReplicaSummary{
		ID: rp.ID, Role: rp.Role, Addr: rp.HTTPAddr,
		Started: optSecs(rp.Started), Ready: optSecs(rp.Ready), SIGTERM: optSecs(rp.Signalled), Exited: optSecs(rp.Exited),
		PreStop: optSecs(rp.PreStop), Signal: rp.StopSignal,
		ExitCode: rp.ExitCode, ExitStatus: rp.ExitStatus, Killed: rp.Killed,
		Requests: t.requests[rp.ID], Failed: t.failed[rp.ID],
		StillListed: slices.Contains(run.StillListed, rp.ID),
	}
	if stop := rp.StopStart(); stop >= 0 && t.lastSent[rp.ID] > stop {
		rs.LastSentSeconds = optSecs(t.lastSent[rp.ID] - stop)
	}
	if rp.Offlined > 0 {
		rs.Offline = optSecs(rp.Offlined)
	}
	if rp.PreStop >= 0 {
		rs.PreStopSeconds = optSecs(rp.PreStopTook)
		rs.PreStopError = rp.PreStopErr
	}
	if tl := rp.Timeline; tl != nil {
		late := tl.LateArrivals
		rs.Late = &late
		rs.Steps = map[string]float64{}
		for k, v := range tl.Steps {
			rs.Steps[k] = secs(v)
		}
		if len(tl.StepErrors) > 0 {
			rs.StepErrors = tl.StepErrors
		}
	}
	return rs
}

// notePreStop counts one preStop call and keeps the first failure's text.
func (s *Summary) notePreStop(rp ReplicaReport) {
	s.PreStopCalls++
	if rp.PreStopErr == "" {
		return
	}
	s.PreStopFailed++
	if s.PreStopError == "" {
		s.PreStopError = rp.PreStopErr
	}
}

// noteTimeline adds a replaced replica's drain timeline (late arrivals,
// window) and reports whether its window was cut short while consumers were
// still sending: late arrivals continued into the last quiet period before
// the listener closed.
func (s *Summary) noteTimeline(cfg Config, rp ReplicaReport) (cut bool) {
	tl := rp.Timeline
	if tl == nil {
		return false
	}
	s.LateReportedBy++
	s.LateRequests += tl.LateArrivals
	if v := secs(tl.LastLateArrival); v > s.LastLateArrivalSeconds {
		s.LastLateArrivalSeconds = v
	}
	closed, ok := tl.Steps[lifecycle.StepListenersClosed]
	if !ok {
		return false
	}
	s.WindowSeconds = max(s.WindowSeconds, secs(closed))
	return tl.LateArrivals > 0 && closed-tl.LastLateArrival < cfg.Timings.PropagationQuiet
}

// judgeExits fails the drainkit strategy when a replaced replica did not
// exit 0: drainkit's promise includes a clean exit (DESIGN.md section 5); a
// replica that exited non-zero had something force-closed, failed or
// overran its grace period, even if no consumer noticed.
func (s *Summary) judgeExits(run StrategyRun, unclean []string) {
	if run.Name != StrategyDrainkit || len(unclean) == 0 {
		return
	}
	s.UncleanExits = unclean
	if s.Pass {
		s.Pass = false
		s.Verdict = fmt.Sprintf("FAIL: no request failed, but %s did not exit 0 (1: something was force-closed at drain.timeout or a server failed; killed: it overran grace_period)",
			strings.Join(unclean, ", "))
	}
}

func median(v []float64) float64 {
	sorted := slices.Clone(v)
	slices.Sort(sorted)
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// plural returns "1 late arrival", "2 late arrivals".
func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// verdict explains the outcome in one line.
func verdict(cfg Config, run StrategyRun, s Summary, windowCut []string) string {
	if run.Err != nil {
		// The replicas' stderr is listed with their deaths, not here.
		msg, _, _ := strings.Cut(run.Err.Error(), "; its stderr ends with:")
		return "ERROR: the run did not complete: " + msg + deathNote(s)
	}
	if s.Requests == 0 {
		return "ERROR: no request was sent" + deathNote(s)
	}
	switch run.Scenario {
	case ScenarioKill:
		return killVerdict(s) + cutNote(s) + deathNote(s)
	case ScenarioWarmup:
		return warmupVerdict(s) + deathNote(s)
	case ScenarioSlowProbe:
		return slowProbeVerdict(cfg, s) + deathNote(s)
	case ScenarioBrownout:
		return brownoutVerdict(cfg, s) + deathNote(s)
	case ScenarioLongLived:
		return longLivedVerdict(cfg, run, s, windowCut) + cutNote(s) + deathNote(s)
	case ScenarioOutage:
		return outageVerdict(verdictBody(cfg, run, s, windowCut), run) + cutNote(s) + deathNote(s)
	case ScenarioBadPush:
		return badPushVerdict(s) + cutNote(s) + deathNote(s)
	case ScenarioZoneLoss:
		return zoneLossVerdict(s) + cutNote(s) + deathNote(s)
	}
	return verdictBody(cfg, run, s, windowCut) + cutNote(s) + deathNote(s)
}

// stopEvent names what started a replica's stop in this run.
func stopEvent(cfg Config, run StrategyRun) string {
	switch {
	case run.Name == StrategyKill && cfg.Exec == "":
		return "SIGKILL"
	case run.Name == StrategyOfflineKill && cfg.Exec == "":
		return "the console's offline"
	case cfg.PreStop:
		return "the preStop call"
	}
	return "SIGTERM"
}

// sending phrases how long consumers kept sending after the stop began: "up
// to 1.96s", or "at least 2.05s" when the load stopped first.
func sending(s Summary) string {
	if s.StalenessCut {
		return fmt.Sprintf("at least %.2fs", s.StalenessSeconds)
	}
	return fmt.Sprintf("up to %.2fs", s.StalenessSeconds)
}

// deathNote names the replicas that ended without being stopped: failures
// they caused are theirs, not the strategy's.
func deathNote(s Summary) string {
	if len(s.Deaths) == 0 {
		return ""
	}
	var parts []string
	for _, g := range groupDeaths(s.Deaths) {
		parts = append(parts, fmt.Sprintf("%s (%s)", strings.Join(g.replicas, ", "), g.first.ExitStatus))
	}
	return fmt.Sprintf("; replicas ended without being stopped: %s, their last stderr lines below", strings.Join(parts, "; "))
}

// cutNote says that figures are lower bounds when the load stopped while a
// consumer still listed a replaced replica.
func cutNote(s Summary) string {
	if !s.StalenessCut {
		return ""
	}
	ids := make([]string, len(s.StillListed))
	for i, id := range s.StillListed {
		ids[i] = fmt.Sprintf("r%d", id)
	}
	return fmt.Sprintf(" (cut short: consumers still listed %s when the load stopped at %.2fs, so the staleness and the failures are lower bounds; raise --tail)",
		strings.Join(ids, ", "), s.LoadEndSeconds)
}

func verdictBody(cfg Config, run StrategyRun, s Summary, windowCut []string) string {
	stop := stopEvent(cfg, run)
	kinds := kindList(s.FailuresByKind)
	if s.Failed == 0 {
		if run.Name == StrategyOfflineKill && cfg.Exec == "" {
			return offlineKillVerdict(cfg, s, "")
		}
		if s.LateReportedBy > 0 {
			return fmt.Sprintf("PASS: 0 of %d requests failed; consumers kept sending %s after %s (%s) and the window stayed open until %.2fs",
				s.Requests, sending(s), stop, plural(s.LateRequests, "late arrival", "late arrivals"), s.WindowSeconds)
		}
		return fmt.Sprintf("PASS: 0 of %d requests failed", s.Requests)
	}
	head := fmt.Sprintf("FAIL: %d of %d requests failed (%s)", s.Failed, s.Requests, kinds)
	switch {
	case run.Name == StrategyOfflineKill && cfg.Exec == "":
		return offlineKillVerdict(cfg, s, head)
	case run.Name == StrategyShutdown && cfg.grpc():
		return grpcShutdownVerdict(head, cfg)
	case run.Name == StrategyShutdown && cfg.Exec == "":
		return fmt.Sprintf("%s: http.Server.Shutdown closed the listener at SIGTERM, but consumers kept sending to it for %s after %s", head, sending(s), stop)
	case run.Name == StrategySleep && cfg.Exec == "":
		return fmt.Sprintf("%s: the sleep of preStop: sleep 10 ended and the listener closed, but consumers kept sending to it for %s after %s", head, sending(s), stop)
	case run.Name == StrategyExit && cfg.Exec == "":
		cut := ""
		if n := s.FailuresByKind[Reset.String()] + s.FailuresByKind[EOF.String()]; n > 0 {
			cut = fmt.Sprintf(", cutting %s in flight,", plural(int64(n), "request", "requests"))
		}
		return fmt.Sprintf("%s: the process died at SIGTERM%s and consumers kept sending to it for %s after %s", head, cut, sending(s), stop)
	case run.Name == StrategyKill && cfg.Exec == "":
		return fmt.Sprintf("%s: SIGKILL ended the process with %s written to it and unanswered, and consumers kept sending to it for %s after SIGKILL",
			head, plural(int64(s.WrittenUnanswered), "request", "requests"), sending(s))
	case len(windowCut) > 0 || (s.LateReportedBy > 0 && s.StalenessSeconds > s.WindowSeconds):
		cut := ""
		if len(windowCut) > 0 {
			cut = fmt.Sprintf(" (on %s still within propagation.quiet %s of the listener closing: propagation.max cut the window short)",
				strings.Join(windowCut, ", "), cfg.Timings.PropagationQuiet)
		}
		return fmt.Sprintf("%s: the propagation window is shorter than the consumers' staleness: the replicas saw late arrivals until %.2fs after the drain began%s and consumers kept sending for %s, but the listeners closed at %.2fs (propagation.max %s); %s",
			head, s.LastLateArrivalSeconds, cut, sending(s), s.WindowSeconds, cfg.Timings.PropagationMax, windowFix(cfg, s.StalenessSeconds))
	case s.LateReportedBy > 0:
		return fmt.Sprintf("%s although the window (%.2fs) outlasted the consumers' staleness (%s): see the failure examples", head, s.WindowSeconds, sending(s))
	default:
		return fmt.Sprintf("%s; consumers kept sending for %s after %s and the replicas reported no drain timeline", head, sending(s), stop)
	}
}

// kindList renders failure counts as "refused 12, reset 3", in Outcome order.
func kindList(m map[string]int) string {
	var parts []string
	for o := Outcome(1); o < numOutcomes; o++ {
		if n := m[o.String()]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", o, n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// Summaries returns one Summary per run of res. When the machine did not
// sustain the load (Judge), no strategy passes and each verdict says that it
// was not judged, instead of blaming the strategy.
func Summaries(res *Result) []Summary {
	out := make([]Summary, len(res.Runs))
	for i, r := range res.Runs {
		out[i] = Summarize(res.Config, r)
	}
	if v := Judge(res, out); !v.Valid {
		why := "the machine could not sustain the load"
		if v.Cause == CauseService {
			why = "the service answered HTTP errors before any replica was stopped"
		}
		for i := range out {
			out[i].Pass = false
			out[i].Verdict = fmt.Sprintf("NOT JUDGED: %d of %d requests failed (%s), but %s (see INVALID): the numbers say nothing about the strategy",
				out[i].Failed, out[i].Requests, kindList(out[i].FailuresByKind), why)
		}
	}
	return out
}

// Passed reports whether the gating strategy (drainkit when it ran, the
// executable with Exec, else every strategy) had zero failures.
func Passed(res *Result, sums []Summary) bool {
	gate := res.Config.gate()
	ok := true
	for _, s := range sums {
		if gate == "" || s.Name == gate {
			ok = ok && s.Pass
		}
	}
	return ok && len(sums) > 0
}
