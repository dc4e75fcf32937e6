package drill

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/drainkit/drainkit/lifecycle/budget"

	"github.com/drainkit/drainkit/internal/syncx"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/textwidth"
)

// Scenario is one discovery fault the drill rehearses under load: what it
// does to the replicas between the baseline and the tail, and what its
// verdict allows.
type Scenario struct {
	// Name is what --scenario takes.
	Name string
	// Description says what it does and what passing means (--scenario
	// list).
	Description string
	// AllStrategies is true when the scenario compares the strategies (it
	// stops replicas the strategy's way); the others run only the gating
	// strategy (drainkit, or the --exec binary): the fault is the same
	// whatever the service does on SIGTERM, and the consumers are judged.
	AllStrategies bool
	// inflict runs the fault on a run's replicas under load.
	inflict func(s *strategyRun, ctx context.Context, disc Discovery, initial []*Replica) error
	// budget is how many failures the verdict allows, from the run's
	// summary so far; nil means none may fail.
	budget func(s Summary) (n int, why string)
	// consumers returns what the run's consumers learn the instances
	// from, standing between them and the discovery; nil means the
	// discovery itself.
	consumers func(s *strategyRun, disc Discovery) (Discovery, error)
	// tryTimeout, if > 0, is the drainkit consumer's per-try timeout
	// (ClientConfig.TryTimeout); 0 leaves a try bounded by the request
	// timeout only.
	tryTimeout time.Duration
}

// Scenario names.
const (
	ScenarioRolling   = "rolling"
	ScenarioKill      = "kill"
	ScenarioWarmup    = "warmup"
	ScenarioSlowProbe = "slow-probe"
	ScenarioOutage    = "registry-outage"
	ScenarioBadPush   = "bad-push"
	ScenarioZoneLoss  = "zone-loss"
	ScenarioBrownout  = "brownout"
	ScenarioLongLived = "long-lived"
)

// Scenarios lists the scenarios in the order `--scenario list` shows them
// and a drill runs them.
var Scenarios = []Scenario{
	{
		Name: ScenarioWarmup,
		Description: "scale-out under load: one more replica starts, whose warm-up takes --warmup (the built-in strategies' example service answers 503 until it is warm; an --exec binary's warm-up is its own). " +
			"Passes when no request fails and none was sent to the new replica before it was READY: drainkit fails readiness until the warm-up is over, so discovery lists it only then; " +
			"the shutdown and exit strategies report ready at once, as services without a startup gate do, and fail the requests that come during their warm-up.",
		AllStrategies: true,
		inflict:       (*strategyRun).scaleOut,
	},
	{
		Name: ScenarioRolling,
		Description: "the rolling restart: each replica is replaced by a new one (start, wait until listed, stop the old one the strategy's way, wait for its exit). " +
			"Passes when the gating strategy (drainkit, or --exec) loses no request: a graceful drain stops new requests before the process exits.",
		AllStrategies: true,
		inflict:       (*strategyRun).rolling,
	},
	{
		Name: ScenarioKill,
		Description: "kill -9 of one READY replica, not replaced: nothing drains, so the discovery learns it only by detection (readiness probes failing, a Consul check or TTL, an etcd lease expiring) " +
			"and a consumer only by its own failures. Shows the impact window (the last request sent to the dead address) against the registry's detection and the consumer's own ejection. " +
			"Passes when the failures stay within the budget: the requests already written to the replica when it died (no consumer can know whether they ran).",
		inflict: (*strategyRun).kill,
		budget: func(s Summary) (int, string) {
			return s.WrittenUnanswered, "requests written to the killed replica and unanswered"
		},
	},
	{
		Name: ScenarioSlowProbe,
		Description: "a readiness check of one READY replica starts to block (a dependency that stopped answering) while traffic runs. " +
			"Passes when no request fails (the service's requests do not wait for the check) and the instance is ejected and dropped by the discovery within what checks.timeout, checks.interval and checks.failure_threshold say (DRAINKIT_CHECKS_*): /readyz answers at once with the checks' last verdict. " +
			"The built-in example's check blocks while a file exists (serve --check-block-dir); an --exec binary has no such check and is only run under load.",
		inflict: (*strategyRun).slowProbe,
	},
	{
		Name: ScenarioOutage,
		Description: "the registry (--etcd or --consul) becomes unreachable for --outage under load: the run's replicas and consumers reach it through a proxy that resets every connection meanwhile. " +
			"Running consumers keep calling on their last view; two drainkit consumers start during the outage, one with the last-good snapshot a consumer wrote before it (consumer.WatcherOptions.SnapshotPath) and one without; " +
			"after the return one replica is replaced, so the return is shown picked up (the four instants of that stop). " +
			"Passes when no request fails, the consumer with the snapshot serves it (its age is printed) and fails nothing, and the one without fails every call for want of a view.",
		inflict: (*strategyRun).registryOutage,
	},
	{
		Name: ScenarioBadPush,
		Description: "the consumers' registry answers come through a proxy that delivers every answer twice, follows every change with the previous answer again (reordered: its older revision after the newer one) and once answers an empty list at the current revision, for 1s. " +
			"Meanwhile one replica is replaced (a new one listed, the old one drained and stopped); the stale answer listing it stays the last one delivered until 1s after its exit, then the empty one comes. " +
			"Works with the built-in discovery, --etcd and --consul (the proxy sits on the answers of the drill's watch; not with --nacos, whose naive consumers poll on their own). " +
			"Passes when no request fails and none is sent to the drained instance after its exit: the last good view survives the empty answer and a stale answer is dropped by its revision. The table gives the proxy's counts.",
		inflict:   (*strategyRun).badPushFault,
		consumers: (*strategyRun).badPushed,
	},
	{
		Name: ScenarioZoneLoss,
		Description: "instances in two zones (the first half of --replicas in zone a, the rest in b; the zone is each instance's metadata: registered by the replica from registry.meta with --consul, --etcd or --nacos, " +
			"set on each endpoint as a Kubernetes endpoints controller does with the built-in discovery) and the drill's consumers in zone a, zone-aware with the drainkit consumer; " +
			"every instance of zone a is killed at once (kill -9). With --zone-policy spill (default) the calls spill to zone b; with strict they stay in zone a and fail. " +
			"Passes when the failures stay within the budget (the requests written to the killed replicas and unanswered; with strict also every request after the loss) and the zone-aware consumer sent nothing to zone b before the loss (with strict, nothing after it either). Shows the spill instant.",
		inflict:   (*strategyRun).zoneLoss,
		budget:    zoneBudget,
		consumers: (*strategyRun).zoned,
	},
	{
		Name: ScenarioBrownout,
		Description: "one of the replicas browns out under a fixed total capacity: every request to it waits 5s (the built-in example's brownout switch, serve --brownout-dir) while its readiness stays 200, so the discovery keeps listing it; each built-in replica serves at most 64 requests at once and sheds the rest with 503 \"over capacity\". " +
			"The drainkit consumer gives each try 500ms (a per-try timeout), ejects the instance after 3 such failures and retries within its retry budget (20 % of the requests plus 10/s); the naive consumer waits the request timeout and never retries. " +
			"Prints the amplification (attempts / requests) and the requests shed over capacity. Passes when the failures stay within the budget (the requests whose retry the retry budget refused), the retries within the retry budget, and no healthy replica went over its capacity. " +
			"An --exec binary has no brownout switch and is only run under load.",
		inflict:    (*strategyRun).brownout,
		tryTimeout: BrownoutTryTimeout,
		budget: func(s Summary) (int, string) {
			if s.Brownout == nil {
				return 0, ""
			}
			return int(s.Brownout.BudgetDenied), "requests whose retry the consumers' retry budget refused"
		},
	},
	{
		Name: ScenarioLongLived,
		Description: "the rolling restart with long-lived streams open: each consumer holds 2 server-sent-event streams (GET /events) over HTTP/1.1 and 2 over HTTP/2 (h2c) besides the request load, " +
			"and with the built-in strategies 2 gRPC server streams (the example's gRPC listener, held 3s each, through the consumer kind's gRPC consumer). " +
			"A draining replica ends each stream with its drain signal (the SSE \"event: drain\"; over HTTP/2 also GOAWAY; a gRPC stream ends cleanly after GOAWAY); the drainkit consumer re-opens it at once through its view on a remaining instance, " +
			"the naive one, like a browser's EventSource, ignores the SSE signal and reconnects to the same address 2s later (its gRPC streams are re-opened on their ClientConn, which reconnects after GOAWAY through the connection-level balancer: such a stream breaks only when the balancer hands the new connection to a closed listener). A stream that breaks (EOF, reset, refused, timeout, an error status) is a failure. " +
			"Passes when no request or stream fails and streams of every kind were ended by the drain signal. " +
			"An --exec binary must serve GET /events that way (text/event-stream, a last \"event: drain\" when it drains) and accept h2c.",
		inflict: (*strategyRun).longLived,
	},
}

// DefaultScenarios are the scenarios a drill runs unless told otherwise.
var DefaultScenarios = []string{ScenarioRolling}

// scenarioNamed returns the scenario called name.
func scenarioNamed(name string) (Scenario, bool) {
	for _, sc := range Scenarios {
		if sc.Name == name {
			return sc, true
		}
	}
	return Scenario{}, false
}

// scenarioNames lists the scenarios' names.
func ScenarioNames() []string {
	out := make([]string, len(Scenarios))
	for i, sc := range Scenarios {
		out[i] = sc.Name
	}
	return out
}

// WriteScenarioList writes `--scenario list`: each scenario's name and
// description, in lines of at most textwidth.Columns columns (runes).
func WriteScenarioList(w io.Writer) error {
	var b strings.Builder
	b.WriteString("scenarios (--scenario NAME[,NAME...], run one after another; default rolling):\n")
	for _, sc := range Scenarios {
		fmt.Fprintf(&b, "\n%s\n  %s\n", sc.Name, sc.Description)
		if !sc.AllStrategies {
			b.WriteString("  Runs the gating strategy only (drainkit, or the --exec binary).\n")
		}
	}
	b.WriteString("\nFor each fault the table, the JSON and the HTML report give four instants: the fault, the registry's decision " +
		"(the discovery's first answer without the instance, with its revision), the first consumer view without it (with its revision) " +
		"and the last request sent to the old address, and the failures per second from the fault to the last of them " +
		"(the table: their sum, per second with --wide).\n")
	_, err := io.WriteString(w, textwidth.Fit(b.String(), textwidth.Columns, 0))
	return err
}

// validateScenarios checks Config.Scenarios.
func (c Config) validateScenarios() error {
	seen := map[string]bool{}
	for _, name := range c.scenarios() {
		if _, ok := scenarioNamed(name); !ok {
			return fmt.Errorf("--scenario: %q is not a scenario: want one or more of %v (--scenario list describes them)", name, ScenarioNames())
		}
		if seen[name] {
			return fmt.Errorf("--scenario: %q given twice", name)
		}
		seen[name] = true
	}
	if seen[ScenarioOutage] && c.Etcd == "" && c.Consul == "" {
		return fmt.Errorf("--scenario registry-outage: needs a registry: give --etcd or --consul")
	}
	if seen[ScenarioOutage] && (c.Outage <= 0 || c.Outage > 10*time.Minute) {
		return fmt.Errorf("--outage: %s is out of range: must be > 0 and <= 10m", c.Outage)
	}
	if seen[ScenarioBadPush] && c.Nacos != "" {
		return fmt.Errorf("--scenario bad-push: not with --nacos (its naive consumers poll the open API on their own, past the proxy): use the built-in discovery, --etcd or --consul")
	}
	if seen[ScenarioZoneLoss] {
		if err := c.validateZoneLoss(); err != nil {
			return err
		}
	}
	if seen[ScenarioWarmup] && (c.Warmup <= 0 || c.Warmup >= c.Timings.WarmupTimeout) {
		return fmt.Errorf("--warmup: %s is out of range: must be > 0 and below warmup.timeout (%s)", c.Warmup, c.Timings.WarmupTimeout)
	}
	return nil
}

// scenarios returns Config.Scenarios, DefaultScenarios when empty.
func (c Config) scenarios() []string {
	if len(c.Scenarios) == 0 {
		return DefaultScenarios
	}
	return c.Scenarios
}

// scenarioStrategies returns the strategies a scenario runs.
func (c Config) scenarioStrategies(sc Scenario) []string {
	names := c.strategyNames()
	if sc.AllStrategies {
		return names
	}
	if g := c.gate(); g != "" {
		return []string{g}
	}
	return names[:1]
}

// concurrentStrategies is the most strategies one of the drill's scenarios
// runs at once (without Sequential).
func (c Config) concurrentStrategies() int {
	n := 1
	for _, name := range c.scenarios() {
		if sc, ok := scenarioNamed(name); ok {
			n = max(n, len(c.scenarioStrategies(sc)))
		}
	}
	return n
}

// scaleOut is ScenarioWarmup: start one more replica under load and wait
// until discovery lists it (it is ready only after its warm-up).
func (s *strategyRun) scaleOut(ctx context.Context, disc Discovery, _ []*Replica) error {
	id := s.newID()
	s.st.set("starting r%d (warm-up)", id)
	var started time.Time
	if _, err := s.startListed(ctx, disc, id, RoleScaleOut, func(r *Replica) {
		started = time.Now()
		s.events.added("start", r, started)
	}); err != nil {
		return err
	}
	// Under load for the whole warm-up: a replica listed before it was warm
	// fails requests until then.
	return syncx.Sleep(ctx, time.Until(started.Add(s.cfg.Warmup)))
}

// checks returns Config.Checks, the defaults when zero.
func (c Config) checks() budget.CheckOptions {
	if c.Checks == (budget.CheckOptions{}) {
		return budget.DefaultCheckOptions()
	}
	return c.Checks
}

// checksEnv returns the DRAINKIT_CHECKS_* variables for Config.Checks.
func (c Config) checksEnv() []string {
	k := c.checks()
	return []string{
		"DRAINKIT_CHECKS_INTERVAL=" + k.Interval.String(),
		"DRAINKIT_CHECKS_TIMEOUT=" + k.Timeout.String(),
		"DRAINKIT_CHECKS_FAILURE_THRESHOLD=" + strconv.Itoa(k.FailureThreshold),
		"DRAINKIT_CHECKS_SUCCESS_THRESHOLD=" + strconv.Itoa(k.SuccessThreshold),
	}
}

// ejectionBound is how long after a check starts to block the discovery
// must have dropped the instance: the round in progress and
// checks.failure_threshold failed rounds (each failing at checks.timeout),
// then the discovery's own detection (readiness probes: failure threshold
// + 1 intervals; a registry watch: one probe interval of slack).
func (c Config) ejectionBound() time.Duration {
	k := c.checks()
	return time.Duration(k.FailureThreshold+1)*k.Interval + k.Timeout + time.Duration(c.FailureThreshold+1)*c.DiscoveryInterval
}

// slowProbe is ScenarioSlowProbe: the first initial replica's readiness
// check blocks from now on (its block file appears); wait until the
// discovery dropped it, at most the bound the checks' settings give.
func (s *strategyRun) slowProbe(ctx context.Context, disc Discovery, initial []*Replica) error {
	victim := initial[0]
	s.st.set("r%d's readiness check blocks", victim.ID)
	if err := s.switchOn(victim, "check blocks", "blocking the check of"); err != nil {
		return err
	}
	deadline := time.Now().Add(s.cfg.ejectionBound() + time.Second)
	for time.Now().Before(deadline) {
		if !slices.ContainsFunc(disc.Endpoints(), func(ep Endpoint) bool { return ep.Replica == victim.ID }) {
			return nil
		}
		if err := syncx.Sleep(ctx, sampleEvery); err != nil {
			return err
		}
	}
	return nil
}

// kill is ScenarioKill: SIGKILL the first initial replica, not replaced,
// and wait for its exit.
func (s *strategyRun) kill(ctx context.Context, _ Discovery, initial []*Replica) error {
	victim := initial[0]
	s.st.set("kill -9 of r%d", victim.ID)
	s.mu.Lock()
	s.faulted[victim.ID] = true
	s.mu.Unlock()
	s.events.fault("SIGKILL", victim, time.Now())
	if err := victim.KillNow(); err != nil {
		return err
	}
	return s.awaitExit(ctx, victim)
}

// killVerdict explains a ScenarioKill run: the failures against the
// budget, and the impact window against the discovery's detection and the
// consumers' ejection.
func killVerdict(s Summary) string {
	budget := 0
	if s.Budget != nil {
		budget = *s.Budget
	}
	head := fmt.Sprintf("PASS: %d of %d requests failed, within the budget of %d (%s)", s.Failed, s.Requests, budget, s.BudgetReason)
	if s.Failed > budget {
		head = fmt.Sprintf("FAIL: %d of %d requests failed (%s), over the budget of %d (%s)", s.Failed, s.Requests, kindList(s.FailuresByKind), budget, s.BudgetReason)
	}
	for _, e := range s.Events {
		head += fmt.Sprintf("; r%d: consumers sent it requests for %s after the SIGKILL, the discovery dropped it after %s",
			e.Replica, after(e.LastSentSeconds, e.FaultSeconds), after(e.RegistryDecisionSeconds, e.FaultSeconds))
		if e.EjectionSeconds != nil {
			head += fmt.Sprintf(", the first consumer ejection came after %s", after(e.EjectionSeconds, e.FaultSeconds))
		}
	}
	if s.Consumer == ConsumerNaive && s.Failed > 0 {
		// A naive consumer fails until the discovery drops the replica;
		// what a consumer can do about a dead one is the point of the
		// scenario.
		head += "; the naive consumer kept sending to the dead replica until the discovery dropped it: " +
			"rerun with --consumer drainkit for drainkit's consumer, which ejects a replica that stops answering"
	}
	return head
}

// after renders how long after from v was: "1.92s", or "never" (within the
// run) when v is nil.
func after(v *float64, from float64) string {
	if v == nil {
		return "never (within the run)"
	}
	return fmt.Sprintf("%.2fs", *v-from)
}

// warmupVerdict explains a ScenarioWarmup run: failures, and requests sent
// to the new replica before it was READY.
func warmupVerdict(s Summary) string {
	var parts []string
	early := 0
	for _, e := range s.Events {
		early += e.EarlyRequests
		parts = append(parts, fmt.Sprintf("r%d started at %.2fs, READY at %s, listed by the discovery at %s, first request at %s",
			e.Replica, e.FaultSeconds, instant(e.ReadySeconds), instant(e.RegistryDecisionSeconds), instant(e.FirstSentSeconds)))
	}
	detail := strings.Join(parts, "; ")
	switch {
	case s.Failed == 0 && early == 0:
		return fmt.Sprintf("PASS: 0 of %d requests failed and none came before READY: %s", s.Requests, detail)
	case early == 0:
		return fmt.Sprintf("FAIL: %d of %d requests failed (%s): the new replica reported READY before its warm-up was over and the discovery listed it: %s",
			s.Failed, s.Requests, kindList(s.FailuresByKind), detail)
	}
	return fmt.Sprintf("FAIL: %d of %d requests failed (%s) and %s before READY: %s", s.Failed, s.Requests, kindList(s.FailuresByKind),
		plural(int64(early), "request was sent to the new replica", "requests were sent to the new replica"), detail)
}

// droppedWithin reports whether the discovery dropped every event's replica
// within bound seconds of its fault.
func droppedWithin(events []EventSummary, bound float64) bool {
	for _, e := range events {
		if e.RegistryDecisionSeconds == nil || *e.RegistryDecisionSeconds-e.FaultSeconds > bound {
			return false
		}
	}
	return len(events) > 0
}

// slowProbeVerdict explains a ScenarioSlowProbe run: failures, and when the
// discovery dropped the instance against what the checks' settings say.
func slowProbeVerdict(cfg Config, s Summary) string {
	k := cfg.checks()
	var parts []string
	for _, e := range s.Events {
		parts = append(parts, fmt.Sprintf("r%d's check blocked at %.2fs and the discovery dropped it after %s",
			e.Replica, e.FaultSeconds, after(e.RegistryDecisionSeconds, e.FaultSeconds)))
	}
	says := fmt.Sprintf("checks.timeout %s, checks.interval %s and checks.failure_threshold %d (with the discovery's detection) say within %.2fs",
		k.Timeout, k.Interval, k.FailureThreshold, s.EjectionBoundSeconds)
	detail := strings.Join(parts, "; ") + "; " + says
	switch {
	case cfg.Exec != "" && s.Failed == 0:
		return fmt.Sprintf("PASS: 0 of %d requests failed; the --exec binary has no check the drill can block, so only the load was rehearsed", s.Requests)
	case s.Pass:
		return fmt.Sprintf("PASS: 0 of %d requests failed while a readiness check blocked: %s", s.Requests, detail)
	case s.Failed > 0:
		return fmt.Sprintf("FAIL: %d of %d requests failed (%s) while a readiness check blocked: %s", s.Failed, s.Requests, kindList(s.FailuresByKind), detail)
	}
	return fmt.Sprintf("FAIL: the instance was not dropped in time: %s", detail)
}
