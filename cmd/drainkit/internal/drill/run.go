package drill

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
	"golang.org/x/sync/errgroup"
)

// StrategyRun is the raw outcome of one strategy: every request and every
// replica. Offsets are from Start.
type StrategyRun struct {
	// Scenario is the scenario the run rehearsed (ScenarioRolling, ...).
	Scenario  string
	Name      string
	Discovery string // how consumers learned the instances
	Consumer  string // the consumers' kind (Config.ConsumerKind)
	// Ejections sums the instances the consumers ejected locally;
	// BudgetDenied the retries their retry budgets refused.
	Ejections    int64
	BudgetDenied int64
	// Telemetry sums the consumers' OpenTelemetry counts; nil for kinds
	// that export none.
	Telemetry *ConsumerTelemetry
	// Start is the drill's start, the same for every strategy of a drill,
	// so that all runs share one time axis; Duration runs from it to this
	// strategy's end.
	Start    time.Time
	Duration time.Duration
	Records  []Record
	Replicas []ReplicaReport
	// LoadStart and LoadEnd bound the load (offsets). They are the same for
	// every strategy of a drill: all start sending together once every
	// strategy's replicas are listed, and stop together once every strategy
	// is done (see Config.Tail).
	LoadStart time.Duration
	LoadEnd   time.Duration
	// StillListed are the replaced replicas that some consumer still listed
	// when the load stopped: consumers would have kept sending to them, so
	// their staleness and failures are lower bounds. Empty when the drill
	// measured the consumers' staleness to its end.
	StillListed []int
	// Deaths are the replicas that ended without the drill stopping them.
	Deaths []ReplicaDeath
	// Events are the faults the scenario inflicted, with their instants.
	Events []Event
	// Streams are the long-lived scenario's streams by kind (nil
	// otherwise).
	Streams []StreamSummary
	// OutageStart and OutageEnd bound the registry-outage scenario's
	// outage (offsets; equal, both zero or negative, without one).
	OutageStart, OutageEnd time.Duration
	// LateConsumers are the consumers started during the outage, with a
	// last-good snapshot and without (empty without an outage).
	LateConsumers []LateConsumer
	// BadPush is what ScenarioBadPush's proxy did (nil in other
	// scenarios).
	BadPush *BadPushStats
	// ProbeFailures are the discovery's failed readiness probes (none with
	// Consul discovery).
	ProbeFailures []ProbeFailure
	// MaxLag is the largest delay of a send behind its schedule; LateSends
	// counts sends more than 20 ms late (the load generator fell behind).
	MaxLag    time.Duration
	LateSends int64
	// Err is set when the run could not complete (a replica never became
	// ready, the drill was interrupted); the numbers are then partial.
	Err error
}

// Replica roles.
const (
	RoleInitial     = "initial"     // started before the load
	RoleReplacement = "replacement" // started by the rolling restart
	RoleScaleOut    = "scale-out"   // started under load by ScenarioWarmup
)

// ReplicaReport is one replica's life, as the drill saw it and as it
// reported itself. Times are offsets from the run's start; a negative value
// means it did not happen.
type ReplicaReport struct {
	ID       int
	Role     string
	HTTPAddr string
	Started  time.Duration
	Ready    time.Duration
	// OwnReady is when the replica logged its READY transition (negative
	// when it logged none); Ready is when the drill's poll saw /readyz 200.
	OwnReady time.Duration
	// Signalled is when the drill sent StopSignal ("SIGTERM", or "SIGKILL"
	// for StrategyKill), negative if it did not.
	Signalled  time.Duration
	StopSignal string
	Exited     time.Duration
	// PreStop is when the drill called POST /drain?wait=propagation before
	// SIGTERM (Config.PreStop; negative without), PreStopTook how long the
	// call took and PreStopErr why it failed ("" when it answered 200).
	PreStop     time.Duration
	PreStopTook time.Duration
	PreStopErr  string
	// Offlined is when the operator marked it offline in Nacos
	// (StrategyOfflineKill); zero or negative without (the drill starts
	// replicas before it offlines one).
	Offlined time.Duration
	// Rolled is true for replicas the rolling restart replaced: their drain
	// happened under load and counts in the drain statistics.
	Rolled bool
	// Faulted is true for the replicas a scenario's fault hit other than by
	// replacing them (ScenarioKill's victim).
	Faulted  bool
	ExitCode int
	// ExitStatus describes how it ended: "exit status 0", "signal:
	// terminated", or "" while it still ran.
	ExitStatus string
	Killed     bool // it outlived grace_period + 5s and got SIGKILL
	// Timeline is the replica's own drain report, nil when it gave none.
	Timeline *ReplicaTimeline
	// T0 is the replica's drain start as an offset (from its timeline, else
	// Signalled).
	T0 time.Duration
	// WindowWarning is its warning of a propagation window cut at
	// propagation.max while consumers still sent (nil without).
	WindowWarning *WindowWarning
}

// strategyRun drives one strategy: replicas, discovery, consumers, rolling
// restart.
type strategyRun struct {
	cfg     Config
	name    string
	launch  Launch
	st      *status
	client  *http.Client // for the drill's own probes and GET /state
	newDisc func() (Discovery, error)
	// scenario is what the run rehearses; events notes its faults.
	scenario Scenario
	events   *eventTracker
	// blockDir holds the slow-probe scenario's block files (the built-in
	// service's check blocks while DIR/<http port> exists); "" otherwise.
	blockDir string
	// proxy stands between the run and the registry in the
	// registry-outage scenario (nil otherwise); outageAt and outageEnd
	// bound the outage.
	proxy               *outageProxy
	outageAt, outageEnd time.Time
	late                []LateConsumer // started during the outage (guarded by mu)
	// push is ScenarioBadPush's proxy on the consumers' answers (nil
	// otherwise).
	push *badPush
	// spring is the run's Spring Cloud consumer (ConsumerSpring; nil
	// otherwise), started once the first replicas are listed.
	spring *springJVM
	// streamSums are the long-lived scenario's streams, set by its fault
	// (in the run's own goroutine, before the run reads them).
	streamSums []StreamSummary

	// start is the drill's start (all offsets count from it); the barriers
	// start and stop the load of all strategies together.
	start       time.Time
	startGate   *barrier
	endGate     *barrier
	arriveStart func()
	arriveEnd   func()

	rec    atomic.Pointer[Recorder]
	nextID int
	mu     sync.Mutex
	reps   []*Replica
	addrs  map[string]int // service host:port -> replica ID
	roles  map[int]string
	rolled map[int]bool
	killed map[int]bool
	// faulted are the replicas a scenario's fault hit without replacing
	// them.
	faulted map[int]bool
	// deaths are the replicas that ended before they were ready (and were
	// started again); cleanup the ones killAll killed.
	deaths  []ReplicaDeath
	cleanup map[int]bool
}

func (s *strategyRun) recorder() *Recorder { return s.rec.Load() }

// run is one strategy's drill: start the replicas, wait for the other
// strategies, send the load through the consumers over the baseline, the
// rolling restart and the tail, stop it with the others, stop the last
// replicas.
func (s *strategyRun) run(ctx context.Context) (res StrategyRun) {
	if s.proxy != nil { // after finish: the last replicas deregister through it
		defer s.proxy.close()
	}
	res.Scenario, res.Name, res.Start, res.Consumer = s.scenario.Name, s.name, s.start, s.cfg.ConsumerKind
	rec := NewRecorder(res.Start)
	s.rec.Store(rec)
	s.addrs, s.roles, s.rolled, s.killed, s.cleanup = map[string]int{}, map[int]string{}, map[int]bool{}, map[int]bool{}, map[int]bool{}
	s.faulted = map[int]bool{}
	defer s.finish(ctx, &res, rec)
	// Runs first: a run that ends early never holds the others up.
	defer func() { s.arriveStart(); s.arriveEnd() }()

	disc, err := s.newDisc()
	if err != nil {
		res.Err = err
		return res
	}
	defer disc.Close()
	res.Discovery = disc.Describe()
	if pd, ok := disc.(*ProbeDiscovery); ok {
		defer func() { res.ProbeFailures = pd.Failures(res.Start) }()
	}
	initial, err := s.startInitial(ctx, disc)
	if err == nil {
		// Before the other strategies' gate: the loads of all strategies
		// start together, each with its JVM warm.
		s.spring, err = s.startSpring(ctx)
		defer s.spring.close()
	}
	if err == nil {
		err = s.awaitOthers(ctx)
	}
	var clients []Client
	cdisc := disc // what the consumers learn the instances from
	if err == nil && s.scenario.consumers != nil {
		if cdisc, err = s.scenario.consumers(s, disc); err == nil && cdisc != disc {
			defer cdisc.Close()
		}
	}
	if err == nil {
		clients, err = s.newClients(cdisc)
	}
	defer func() { closeAll(clients) }()
	if err != nil {
		res.Err = err
		return res
	}
	s.events = newEventTracker(res.Start, cdisc, clients)
	load := s.startLoad(ctx, rec, clients, &res)
	err = s.underLoad(ctx, disc, initial, clients)
	res.StillListed = s.stillListed(clients)
	load.finish(&res, clients)
	res.Events = s.events.finish(rec.Records(), s.readyAt)
	res.Streams = s.streamSums
	res.OutageStart, res.OutageEnd = -1, -1
	if s.push != nil {
		st := s.push.stats(res.Start)
		res.BadPush = &st
	}
	if !s.outageAt.IsZero() {
		res.OutageStart, res.OutageEnd = s.outageAt.Sub(res.Start), s.outageEnd.Sub(res.Start)
		s.mu.Lock()
		res.LateConsumers = s.late
		s.mu.Unlock()
	}
	if err != nil {
		res.Err = err
		return res
	}
	s.st.set("stopping the last replicas")
	s.stopAll(ctx)
	return res
}

// finish kills what still runs and fills in the run's records and replicas.
func (s *strategyRun) finish(ctx context.Context, res *StrategyRun, rec *Recorder) {
	s.killAll()
	if res.Err != nil && ctx.Err() != nil {
		res.Err = errInterrupted
	}
	res.Duration = time.Since(res.Start)
	res.Records = rec.Records()
	res.Replicas = s.reports(res.Start)
	res.Deaths = s.runDeaths()
	s.st.set("done")
}

// startInitial starts Config.Replicas replicas at once and waits until
// discovery lists them all.
func (s *strategyRun) startInitial(ctx context.Context, disc Discovery) ([]*Replica, error) {
	s.st.set("starting %d replicas", s.cfg.Replicas)
	initial := make([]*Replica, s.cfg.Replicas)
	g, gctx := errgroup.WithContext(ctx)
	for i := range initial {
		id := s.newID()
		g.Go(func() error {
			r, err := s.startListed(gctx, disc, id, RoleInitial, nil)
			initial[i] = r
			return err
		})
	}
	return initial, g.Wait()
}

// awaitOthers waits until every strategy's first replicas are listed.
func (s *strategyRun) awaitOthers(ctx context.Context) error {
	s.st.set("waiting for the other strategies' replicas")
	s.arriveStart()
	return s.startGate.wait(ctx)
}

// newClients builds Config.Consumers consumers of Config.ConsumerKind over
// disc, each behind its own cache when Config.ConsumerCache is set
// (staggered, so that they do not all refresh at once).
func (s *strategyRun) newClients(disc Discovery) ([]Client, error) {
	newClient, err := s.cfg.newClientFunc()
	if err != nil {
		return nil, err
	}
	clients := make([]Client, 0, s.cfg.Consumers)
	for i := range s.cfg.Consumers {
		cc := ClientConfig{ID: i + 1, Service: s.cfg.serviceName(s.name), Views: disc, Endpoints: disc, Timeout: s.cfg.RequestTimeout, Dial: drillDialer,
			TryTimeout: s.scenario.tryTimeout}
		if s.scenario.Name == ScenarioZoneLoss {
			cc.Zones = s.cfg.zoneConsumers()
		}
		cc.spring = s.spring
		if ttl := s.cfg.ConsumerCache; ttl > 0 && s.spring == nil { // the JVM caches by itself
			phase := float64(i) / float64(s.cfg.Consumers)
			cc.Endpoints = NewCachedSource(disc, ttl, phase)
			cc.Views = cachedViews(disc, ttl, phase)
		}
		c, err := newClient(cc)
		if err != nil {
			closeAll(clients)
			return nil, fmt.Errorf("%s: --consumer %s: %w", s.name, s.cfg.ConsumerKind, err)
		}
		clients = append(clients, c)
	}
	return clients, nil
}

func closeAll(clients []Client) {
	for _, c := range clients {
		c.Close()
	}
}

// runningLoad is a Load sending in the background.
type runningLoad struct {
	load *Load
	stop context.CancelFunc
	done chan struct{}
}

// startLoad starts sending through clients and notes the load's start.
func (s *strategyRun) startLoad(ctx context.Context, rec *Recorder, clients []Client, res *StrategyRun) *runningLoad {
	l := &runningLoad{
		load: &Load{Rate: s.cfg.Rate, Clients: clients, Request: s.cfg.request(), Timeout: s.cfg.RequestTimeout,
			Recorder: rec, ReplicaOf: s.replicaOf},
		done: make(chan struct{}),
	}
	var lctx context.Context
	lctx, l.stop = context.WithCancel(ctx)
	res.LoadStart = time.Since(res.Start)
	go func() { defer close(l.done); l.load.Run(lctx) }()
	return l
}

// finish stops the load, waits for the requests in flight and notes the
// load's end, its pacing and the consumers' ejections.
func (l *runningLoad) finish(res *StrategyRun, clients []Client) {
	l.stop()
	res.LoadEnd = time.Since(res.Start)
	<-l.done
	res.MaxLag, res.LateSends = l.load.Pacing()
	for _, c := range clients {
		st := c.Stats()
		res.Ejections += st.Ejections
		res.BudgetDenied += st.BudgetDenied
	}
	res.Telemetry = sumTelemetry(clients)
}

// underLoad is what happens while the load runs: the baseline, the
// scenario's fault (the rolling restart, ...), the tail, then more load
// until no consumer lists a replaced or faulted replica and every strategy
// is done.
func (s *strategyRun) underLoad(ctx context.Context, disc Discovery, initial []*Replica, clients []Client) error {
	s.st.set("baseline load")
	if err := syncx.Sleep(ctx, s.cfg.Baseline); err != nil {
		return err
	}
	if err := s.scenario.inflict(s, ctx, disc, initial); err != nil {
		return err
	}
	s.st.set("tail load")
	if err := syncx.Sleep(ctx, s.cfg.Tail); err != nil {
		return err
	}
	s.st.set("load until no consumer lists a replaced replica")
	if err := s.awaitViewsClean(ctx, clients); err != nil {
		return err
	}
	s.st.set("load until every strategy is done")
	s.arriveEnd()
	return s.endGate.wait(ctx)
}

// rolling replaces each of olds in turn: start a new replica, wait until
// discovery lists it, stop the old one, wait for its exit.
func (s *strategyRun) rolling(ctx context.Context, disc Discovery, olds []*Replica) error {
	for i, old := range olds {
		id := s.newID()
		s.st.set("rolling %d/%d: starting r%d", i+1, len(olds), id)
		if _, err := s.startListed(ctx, disc, id, RoleReplacement, nil); err != nil {
			return err
		}
		s.st.set("rolling %d/%d: stopping r%d", i+1, len(olds), old.ID)
		s.mu.Lock()
		s.rolled[old.ID] = true
		s.mu.Unlock()
		s.events.fault(s.stopKind(), old, time.Now())
		if err := s.stop(ctx, old); err != nil {
			return err
		}
		if err := s.awaitExit(ctx, old); err != nil {
			return err
		}
	}
	return nil
}

// stop stops one old replica as the strategy does: SIGKILL for
// StrategyKill; the console's offline, then SIGKILL, for
// StrategyOfflineKill; else SIGTERM, after the preStop hook with Config.PreStop
// (as the kubelet does: run the hook, then SIGTERM whatever the hook's
// outcome; the hook is bounded by the grace period).
func (s *strategyRun) stop(ctx context.Context, old *Replica) error {
	if s.name == StrategyKill && s.cfg.Exec == "" {
		return old.KillNow()
	}
	if s.name == StrategyOfflineKill && s.cfg.Exec == "" {
		return s.offlineThenKill(ctx, old)
	}
	if s.cfg.PreStop {
		old.PreStop(ctx, s.cfg.Timings.GracePeriod, s.client)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return old.Terminate(s.client)
}

// stopKind names how stop begins, for the run's events.
func (s *strategyRun) stopKind() string {
	switch {
	case s.name == StrategyKill && s.cfg.Exec == "":
		return "SIGKILL"
	case s.name == StrategyOfflineKill && s.cfg.Exec == "":
		return "offline"
	case s.cfg.PreStop:
		return "preStop"
	}
	return "SIGTERM"
}

// awaitViewsClean keeps the load running until no consumer lists a replaced
// replica any more and some consumer's view dropped each faulted one (its
// own ejection aside), so that the consumers' staleness and the events'
// instants are measured to their end, or for at most Config.StaleWait.
func (s *strategyRun) awaitViewsClean(ctx context.Context, clients []Client) error {
	deadline := time.Now().Add(s.cfg.StaleWait())
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for (len(s.stillListed(clients)) > 0 || !s.events.seen()) && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// stillListed returns the replaced replicas that some consumer's next
// request could still go to, sorted.
func (s *strategyRun) stillListed(clients []Client) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[int]bool{}
	var out []int
	for _, c := range clients {
		for _, addr := range c.Listed() {
			if id := s.addrs[addr]; (s.rolled[id] || s.faulted[id]) && !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	slices.Sort(out)
	return out
}

// awaitExit waits for r to exit within grace_period + 5 s, else kills it.
func (s *strategyRun) awaitExit(ctx context.Context, r *Replica) error {
	wctx, cancel := context.WithTimeout(ctx, s.cfg.Timings.GracePeriod+5*time.Second)
	defer cancel()
	if err := r.WaitExit(wctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.mu.Lock()
		s.killed[r.ID] = true
		s.mu.Unlock()
		r.Kill()
		<-r.Done()
	}
	return nil
}

// startListed starts replica id and waits until it is ready and discovery
// lists it. A replica that dies before it is ready (another process took its
// port) is retried with new ports, up to three times. started, if not nil,
// is called as soon as each attempt's process runs.
func (s *strategyRun) startListed(ctx context.Context, disc Discovery, id int, role string, started func(*Replica)) (*Replica, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		r, err := StartReplica(s.launchAs(role, id), id)
		if err != nil {
			return nil, err
		}
		if started != nil {
			started(r)
		}
		s.mu.Lock()
		s.reps = append(s.reps, r)
		s.addrs[r.HTTPAddr] = id
		if r.GRPCAddr != "" {
			s.addrs[r.GRPCAddr] = id
		}
		s.roles[id] = role
		s.mu.Unlock()
		rctx, cancel := context.WithTimeout(ctx, s.cfg.Timings.WarmupTimeout+10*time.Second)
		err = r.WaitReady(rctx, s.client)
		cancel()
		if err != nil {
			lastErr = fmt.Errorf("%s: %w", s.name, err)
			status := ""
			select {
			case <-r.Done():
				status = exitStatus(r)
			default:
				status = fmt.Sprintf("not ready: %v: killed by the drill", rctx.Err())
			}
			r.Kill()
			<-r.Done()
			s.forget(r)
			if ctx.Err() == nil { // not a replica the drill gave up on
				s.mu.Lock()
				s.deaths = append(s.deaths, death(r, role, attempt+1, s.start, true, status))
				s.mu.Unlock()
			}
			if ctx.Err() != nil {
				return nil, lastErr
			}
			continue
		}
		disc.Add(r)
		lctx, cancel := context.WithTimeout(ctx, 10*time.Second+time.Duration(s.cfg.FailureThreshold)*s.cfg.DiscoveryInterval)
		err = disc.WaitListed(lctx, id)
		cancel()
		if err != nil && s.cfg.registries() > 0 {
			// The usual cause besides an unreachable registry: the binary
			// reads other variables than it was given.
			return nil, fmt.Errorf("%s: %w; the replica was given %s", s.name, err, describeRegistryEnv(s.launch.Env))
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		return r, nil
	}
	return nil, lastErr
}

// readyAt returns when replica id was READY, as an offset: its own log
// line, else the drill's first /readyz 200; negative when neither.
func (s *strategyRun) readyAt(id int) time.Duration {
	s.mu.Lock()
	reps := append([]*Replica(nil), s.reps...)
	s.mu.Unlock()
	for _, r := range reps {
		if r.ID != id {
			continue
		}
		if t := r.OwnReady(); !t.IsZero() {
			return t.Sub(s.start)
		}
		if _, ready, _, _ := r.Times(); !ready.IsZero() {
			return ready.Sub(s.start)
		}
	}
	return -1
}

// launchAs returns how to start replica id in role: ScenarioWarmup's
// scale-out replica of a built-in strategy warms up for Config.Warmup (an
// --exec binary's warm-up is its own); in ScenarioZoneLoss with a registry,
// the replica registers its zone (zoneEnv).
func (s *strategyRun) launchAs(role string, id int) Launch {
	l := s.launch
	if role == RoleScaleOut && s.cfg.Exec == "" {
		l.Args = append(slices.Clip(l.Args), "--warmup", s.cfg.Warmup.String())
	}
	if s.scenario.Name == ScenarioZoneLoss && s.cfg.registries() > 0 {
		l.Env = append(slices.Clip(l.Env), zoneEnv(l.Env, id, s.cfg.Replicas))
	}
	return l
}

// replicaOf returns the ID of the replica serving on addr, 0 for none.
func (s *strategyRun) replicaOf(addr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addrs[addr]
}

func (s *strategyRun) forget(r *Replica) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, x := range s.reps {
		if x == r {
			s.reps = append(s.reps[:i], s.reps[i+1:]...)
			return
		}
	}
}

func (s *strategyRun) newID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	return s.nextID
}

func (s *strategyRun) live() []*Replica {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*Replica
	for _, r := range s.reps {
		select {
		case <-r.Done():
		default:
			out = append(out, r)
		}
	}
	return out
}

// stopAll drains the replicas still running after the load stopped.
func (s *strategyRun) stopAll(ctx context.Context) {
	var wg sync.WaitGroup
	for _, r := range s.live() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r.Terminate(s.client) == nil {
				_ = s.awaitExit(ctx, r)
			}
		}()
	}
	wg.Wait()
}

// killAll kills whatever still runs (after an error or an interrupt).
func (s *strategyRun) killAll() {
	for _, r := range s.live() {
		s.mu.Lock()
		s.cleanup[r.ID] = true
		s.mu.Unlock()
		r.Kill()
		<-r.Done()
	}
}

// runDeaths returns the replicas that ended without being stopped: those
// that died before they were ready, then those that died while serving.
func (s *strategyRun) runDeaths() []ReplicaDeath {
	s.mu.Lock()
	out := append([]ReplicaDeath(nil), s.deaths...)
	reps := append([]*Replica(nil), s.reps...)
	s.mu.Unlock()
	for _, r := range reps {
		_, _, signalled, exited := r.Times()
		s.mu.Lock()
		stopped := !signalled.IsZero() || s.cleanup[r.ID] || !r.PreStopResult().At.IsZero()
		role := s.roles[r.ID]
		s.mu.Unlock()
		if !exited.IsZero() && !stopped {
			out = append(out, death(r, role, 1, s.start, false, exitStatus(r)))
		}
	}
	return out
}

func (s *strategyRun) reports(start time.Time) []ReplicaReport {
	s.mu.Lock()
	reps := append([]*Replica(nil), s.reps...)
	s.mu.Unlock()
	slices.SortFunc(reps, func(a, b *Replica) int { return a.ID - b.ID })
	off := func(t time.Time) time.Duration {
		if t.IsZero() {
			return -1
		}
		return t.Sub(start)
	}
	out := make([]ReplicaReport, 0, len(reps))
	for _, r := range reps {
		started, ready, signalled, exited := r.Times()
		pre := r.PreStopResult()
		s.mu.Lock()
		rr := ReplicaReport{
			ID: r.ID, Role: s.roles[r.ID], HTTPAddr: r.HTTPAddr,
			Started: off(started), Ready: off(ready), OwnReady: off(r.OwnReady()), Signalled: off(signalled), Exited: off(exited),
			PreStop: off(pre.At), PreStopTook: pre.Took, PreStopErr: pre.Err, Offlined: off(r.Offlined()),
			Rolled: s.rolled[r.ID], Faulted: s.faulted[r.ID], Killed: s.killed[r.ID], ExitCode: r.ExitCode(), StopSignal: r.StopSignal(),
		}
		s.mu.Unlock()
		if rr.Exited >= 0 {
			rr.ExitStatus = "exit status 0"
			if err := r.ExitErr(); err != nil {
				rr.ExitStatus = err.Error()
			}
		}
		rr.T0 = rr.StopStart()
		rr.WindowWarning = r.WindowWarning()
		if tl, ok := r.Timeline(); ok {
			rr.Timeline = &tl
			if !tl.T0.IsZero() {
				rr.T0 = tl.T0.Sub(start)
			}
		}
		out = append(out, rr)
	}
	return out
}

// StopStart is when the replica was told to stop: the console's offline
// (StrategyOfflineKill) or the preStop call if the drill made one, else
// the signal (negative when none happened).
func (rp ReplicaReport) StopStart() time.Duration {
	if rp.Offlined > 0 {
		return rp.Offlined
	}
	if rp.PreStop >= 0 {
		return rp.PreStop
	}
	return rp.Signalled
}

// errInterrupted replaces the errors of a run cut short by SIGINT/SIGTERM.
var errInterrupted = errors.New("interrupted (SIGINT or SIGTERM): replicas killed, numbers partial")
