package drill

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// MaxPacingLag is how far behind its schedule the load generator may fall
// before a drill is judged invalid: beyond it, the requests' timing no
// longer says when consumers would have sent them.
const MaxPacingLag = time.Second

// CoreRate is about how many requests per second one core drives in a drill
// in all: the load generator, the consumers and the replicas serving them.
// Measured on the project's 2-core machine: `drill --strategies drainkit
// --rate 1000 --replicas 2` sent 11,005 requests for 6.8 CPU-seconds (user
// and system, the replicas' included), about 1,600 per CPU-second.
const CoreRate = 1500

// Validity says whether a drill measured the strategies' drains. It did
// not when the service under drill answered HTTP errors (5xx) before any
// replica was stopped, at any rate: the service is unhealthy, or the
// request (--method, --path, --body) names nothing it serves, and no drain
// caused them (Cause CauseService). Nor when requests failed otherwise or
// readiness probes failed before any replica was stopped, or the load fell
// more than MaxPacingLag behind: the machine could not sustain the load
// (Cause CauseMachine). Valid is then false and Reason names the cause and
// what to change.
type Validity struct {
	Valid  bool
	Cause  string
	Reason string
}

// Causes of an invalid drill (Validity.Cause).
const (
	// CauseService: the service answered HTTP errors before any stop.
	CauseService = "service"
	// CauseMachine: the machine could not sustain the load.
	CauseMachine = "machine"
)

// overload is what one run saw before its first stop: of an unhealthy
// service (HTTP errors) and of an overloaded machine (everything else).
type overload struct {
	httpErrors int            // 5xx answers before the run's first stop
	statuses   map[string]int // their status texts
	failed     int            // other requests that failed before the run's first stop
	kinds      map[string]int // their kinds
	probeFails int            // readiness probes failed before their replica's stop
	maxLag     time.Duration
}

// Judge returns the validity of res.
func Judge(res *Result, sums []Summary) Validity {
	total := overload{kinds: map[string]int{}, statuses: map[string]int{}}
	for _, run := range res.Runs {
		o := runOverload(run)
		total.httpErrors += o.httpErrors
		total.failed += o.failed
		total.probeFails += o.probeFails
		total.maxLag = max(total.maxLag, o.maxLag)
		for k, n := range o.kinds {
			total.kinds[k] += n
		}
		for k, n := range o.statuses {
			total.statuses[k] += n
		}
	}
	causes := total.machineCauses()
	if total.httpErrors > 0 {
		reason := fmt.Sprintf("INVALID: the service under drill is unhealthy, not the machine: it answered %s of %s with HTTP errors (%s) before any replica was stopped, so no drain caused them and the numbers say nothing about draining; make %s answer without 5xx under this load, or drill an endpoint that does with --path, --method and --body",
			plural(int64(total.httpErrors), "request", "requests"), res.Config.target(), countList(total.statuses), res.Config.target())
		if len(causes) > 0 {
			reason += "; besides, " + strings.Join(causes, ", ") + ": " + lowerAdvice(res.Config)
		}
		return Validity{Cause: CauseService, Reason: reason}
	}
	if len(causes) == 0 {
		return Validity{Valid: true}
	}
	return Validity{Cause: CauseMachine, Reason: fmt.Sprintf("INVALID: the machine could not sustain this drill, so its numbers say nothing about the strategies: %s; %s",
		strings.Join(causes, ", "), lowerAdvice(res.Config))}
}

// countList renders counts by name, sorted: "503 Service Unavailable 12".
func countList(m map[string]int) string {
	parts := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// machineCauses names what o saw of an overloaded machine.
func (total overload) machineCauses() []string {
	var causes []string
	if total.failed > 0 {
		causes = append(causes, fmt.Sprintf("%s failed (%s) before any replica was stopped",
			plural(int64(total.failed), "request", "requests"), kindList(total.kinds)))
	}
	if total.probeFails > 0 {
		causes = append(causes, fmt.Sprintf("%s of replicas not yet stopped failed",
			plural(int64(total.probeFails), "readiness probe", "readiness probes")))
	}
	if total.maxLag > MaxPacingLag {
		causes = append(causes, fmt.Sprintf("the load fell up to %.1fs behind its schedule (bound %s)", total.maxLag.Seconds(), MaxPacingLag))
	}
	return causes
}

// lowerAdvice says what to lower, with the current values.
func lowerAdvice(c Config) string {
	n := c.concurrentStrategies()
	total := c.Rate * float64(n)
	if c.Sequential {
		total = c.Rate
	}
	advice := fmt.Sprintf("lower --rate (%g now, %g requests/s in all; one core drives about %d requests/s in all), --replicas (%d) or --consumers (%d)",
		c.Rate, total, CoreRate, c.Replicas, c.Consumers)
	if n > 1 && !c.Sequential {
		advice += fmt.Sprintf(", or give each of the %d strategies the whole machine with --sequential", n)
	}
	return advice
}

// runOverload counts what run saw of an overloaded machine: failed requests
// that had failed before its first stop (SIGTERM, SIGKILL or preStop call),
// so that no stop can have caused them (a request in flight when a replica
// is killed fails after the kill; a late send may reach a replica already
// stopped),
// readiness probes that failed before their replica was stopped, and the
// pacing lag.
func runOverload(run StrategyRun) overload {
	o := overload{kinds: map[string]int{}, statuses: map[string]int{}, maxLag: run.MaxLag}
	first := run.Duration
	stops := map[int]time.Duration{}
	for _, rp := range run.Replicas {
		if stop := rp.StopStart(); stop >= 0 {
			stops[rp.ID] = stop
			if rp.Rolled || rp.Faulted {
				first = min(first, stop)
			}
		} else if rp.Exited >= 0 {
			stops[rp.ID] = rp.Exited // it died on its own: reported as such
		}
	}
	if run.hadOutage() {
		first = min(first, run.OutageStart)
	}
	for _, e := range run.Events { // a scenario's fault other than a stop
		first = min(first, e.Fault)
		if stop, ok := stops[e.Replica]; !e.Added && (!ok || e.Fault < stop) {
			stops[e.Replica] = e.Fault // its probes may fail from then on
		}
	}
	for _, r := range run.Records {
		switch {
		case r.End >= first || !r.Outcome.Failed():
		case r.Outcome == Status5xx:
			o.httpErrors++
			o.statuses[cmp.Or(r.Err, "5xx")]++
		default:
			o.failed++
			o.kinds[r.Outcome.String()]++
		}
	}
	for _, f := range run.ProbeFailures {
		if stop, ok := stops[f.Replica]; !ok || f.At < stop {
			o.probeFails++
		}
	}
	return o
}

// CapacityWarning returns a warning, before the drill starts, when its load
// asks more of cores than they drive (CoreRate each): all strategies at
// once at Rate each, or one at a time with Sequential. "" when it fits. The
// drill still runs; Judge decides afterwards.
func (c Config) CapacityWarning(cores int) string {
	total := c.Rate * float64(c.concurrentStrategies())
	if c.Sequential {
		total = c.Rate
	}
	capacity := float64(CoreRate * max(cores, 1))
	if total <= capacity {
		return ""
	}
	return fmt.Sprintf("this drill asks for %g requests/s in all and this machine's %d cores drive about %g: expect it to be judged INVALID; %s",
		total, cores, capacity, lowerAdvice(c))
}
