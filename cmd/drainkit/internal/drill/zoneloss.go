package drill

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/registry"
)

// Zone policies (Config.ZonePolicy, `drill --zone-policy`): what the
// drainkit consumer does when its own zone has nothing healthy left.
const (
	// ZoneSpill sends the requests to the other zone (consumer.Zones
	// without Strict).
	ZoneSpill = "spill"
	// ZoneStrict keeps them in the consumer's zone, where they fail
	// (consumer.Zones.Strict).
	ZoneStrict = "strict"
)

// ZonePolicies lists the zone policies.
var ZonePolicies = []string{ZoneSpill, ZoneStrict}

// The zones of ScenarioZoneLoss: the consumers and the first half of the
// initial replicas are in zoneLocal, the rest in zoneRemote.
const (
	zoneLocal  = "a"
	zoneRemote = "b"
)

// zoneOf returns the zone of replica id in a run of replicas initial
// replicas: the first half (at least one) in zoneLocal, the others and any
// started later in zoneRemote.
func zoneOf(id, replicas int) string {
	if id <= max(replicas/2, 1) {
		return zoneLocal
	}
	return zoneRemote
}

// zoneConsumers returns the consumer.Zones of the drill's consumers in
// ScenarioZoneLoss: zoneLocal, zone-aware whatever the view's size (the
// drill runs a few replicas, below Envoy's default minimum of 6), strict
// or spilling as Config.ZonePolicy says.
func (c Config) zoneConsumers() consumer.Zones {
	return consumer.Zones{Local: zoneLocal, MinClusterSize: 1, Strict: c.ZonePolicy == ZoneStrict}
}

// zoned is ScenarioZoneLoss's consumer discovery. With a registry it is
// disc itself: each replica registered its zone (zoneEnv), and the
// registry's Source delivers it in the instance's metadata; zoned checks
// that every listed replica carries its zone, since a binary that does not
// read registry.meta would make the run judge consumers blind to zones.
// With the built-in discovery, disc's answers get each instance's zone in
// its metadata (consumer.Zones' default key "zone") from a relay, as a
// Kubernetes endpoints controller copies the node's zone into each
// endpoint.
func (s *strategyRun) zoned(disc Discovery) (Discovery, error) {
	n := s.cfg.Replicas
	if s.cfg.registries() > 0 {
		return disc, registeredZones(disc, n)
	}
	r, err := newViewRelay(disc, func(m relayed) []relayed {
		zone := map[string]string{}
		for _, ep := range m.eps {
			zone[ep.Addr] = zoneOf(ep.Replica, n)
		}
		insts := make([]registry.Instance, len(m.view.Instances))
		for i, in := range m.view.Instances {
			in.Meta = maps.Clone(in.Meta)
			if in.Meta == nil {
				in.Meta = map[string]string{}
			}
			in.Meta[zoneKey] = zone[in.HostPort()]
			insts[i] = in
		}
		if m.view.Instances != nil {
			m.view.Instances = insts
		}
		return []relayed{m}
	})
	if err != nil {
		return nil, fmt.Errorf("zone-loss: %w", err)
	}
	return r, nil
}

// zoneKey is the metadata key of an instance's zone, consumer.Zones'
// default.
const zoneKey = "zone"

// zoneEnv returns the variable that gives replica id, in a run of replicas
// initial replicas, its zone in the registry: registry.meta with
// zone=zoneOf(id), added to the pairs env's last DRAINKIT_REGISTRY_META
// already holds (its own zone pair replaced).
func zoneEnv(env []string, id, replicas int) string {
	name := config.EnvVar("registry.meta")
	pairs := []string{}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			pairs = pairs[:0]
			for _, p := range strings.Split(v, ",") {
				if k, _, _ := strings.Cut(p, "="); strings.TrimSpace(k) != zoneKey && strings.TrimSpace(p) != "" {
					pairs = append(pairs, p)
				}
			}
		}
	}
	return name + "=" + strings.Join(append(pairs, zoneKey+"="+zoneOf(id, replicas)), ",")
}

// registeredZones checks that disc's current view lists each of its
// replicas with its zone (zoneOf) in the metadata; a view that lists none
// of them (none within 10 s) fails too, rather than passing unchecked.
func registeredZones(disc Discovery, replicas int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var view registry.View
	werr := disc.Watch(ctx, func(v registry.View) { view = v; cancel() })
	ids := map[string]int{}
	for _, ep := range disc.Endpoints() {
		ids[ep.Addr] = ep.Replica
	}
	checked := 0
	for _, in := range view.Instances {
		id := ids[in.HostPort()]
		if id == 0 {
			continue
		}
		checked++
		if want := zoneOf(id, replicas); in.Meta[zoneKey] != want {
			return fmt.Errorf("zone-loss: replica r%d is listed in %s with metadata %s=%q, want %q: the replicas register their zone from %s, which this binary does not read (it is drainkit's setting registry.meta)",
				id, view.Source, zoneKey, in.Meta[zoneKey], want, config.EnvVar("registry.meta"))
		}
	}
	if checked == 0 {
		return fmt.Errorf("zone-loss: the registry's view listed none of the replicas, so their zones could not be checked (watch: %v)", werr)
	}
	return nil
}

// zoneLoss is ScenarioZoneLoss: kill -9 every initial replica of
// zoneLocal at once, not replaced, and wait for their exits.
func (s *strategyRun) zoneLoss(ctx context.Context, _ Discovery, initial []*Replica) error {
	var victims []*Replica
	for _, r := range initial {
		if zoneOf(r.ID, s.cfg.Replicas) == zoneLocal {
			victims = append(victims, r)
		}
	}
	s.st.set("kill -9 of zone %s (%d replicas)", zoneLocal, len(victims))
	now := time.Now()
	s.mu.Lock()
	for _, r := range victims {
		s.faulted[r.ID] = true
	}
	s.mu.Unlock()
	for _, r := range victims {
		s.events.fault("SIGKILL", r, now)
		if err := r.KillNow(); err != nil {
			return err
		}
	}
	for _, r := range victims {
		if err := s.awaitExit(ctx, r); err != nil {
			return err
		}
	}
	return nil
}

// ZoneSummary is ScenarioZoneLoss's findings. Times in seconds from the
// run's start.
type ZoneSummary struct {
	// Policy is Config.ZonePolicy; ZoneAware is false for a consumer that
	// knows no zones (naive), which sends to both zones all along.
	Policy    string `json:"zone_policy"`
	ZoneAware bool   `json:"zone_aware"`
	// ConsumerZone is the consumers' zone, LostZone the one killed (the
	// same), Zones each replica's zone ("r1": "a").
	ConsumerZone string            `json:"consumer_zone"`
	Zones        map[string]string `json:"replica_zones"`
	// LossSeconds is when the zone's replicas were killed.
	LossSeconds float64 `json:"zone_loss_s"`
	// RemoteBeforeLoss counts the requests answered in the other zone
	// before the loss (a zone-aware consumer sends none there).
	RemoteBeforeLoss int `json:"remote_zone_requests_before_loss"`
	// SpillSeconds is the first request after the loss answered in the
	// other zone (the spill instant: a request in flight at the loss and
	// resent there spilled at the loss; null when none spilled), and
	// RemoteAfterLoss how many were.
	SpillSeconds    *float64 `json:"spill_s"`
	RemoteAfterLoss int      `json:"remote_zone_requests_after_loss"`
	// FailedAfterLoss counts the requests that failed at or after the loss.
	FailedAfterLoss int `json:"failed_after_loss"`
}

// summarizeZones returns run's zone-loss findings, nil for other
// scenarios.
func summarizeZones(cfg Config, run StrategyRun) *ZoneSummary {
	if run.Scenario != ScenarioZoneLoss {
		return nil
	}
	z := &ZoneSummary{Policy: cfg.ZonePolicy, ZoneAware: run.Consumer == ConsumerDrainkit, ConsumerZone: zoneLocal, Zones: map[string]string{}}
	for _, rp := range run.Replicas {
		z.Zones[fmt.Sprintf("r%d", rp.ID)] = zoneOf(rp.ID, cfg.Replicas)
	}
	loss := time.Duration(-1)
	for _, e := range run.Events {
		if loss < 0 || e.Fault < loss {
			loss = e.Fault
		}
	}
	if loss < 0 {
		return z
	}
	z.LossSeconds = secs(loss)
	spill := time.Duration(-1)
	for _, r := range run.Records {
		// A request in flight at the loss and resent to the other zone
		// spilled at the loss.
		remote := r.Replica != 0 && zoneOf(r.Replica, cfg.Replicas) == zoneRemote && r.Outcome == OK
		switch {
		case remote && r.End < loss:
			z.RemoteBeforeLoss++
		case remote:
			z.RemoteAfterLoss++
			if at := max(r.Sent, loss); spill < 0 || at < spill {
				spill = at
			}
		}
		// A request sent before the loss and failed after it (refused on
		// its resend within the zone) failed of the loss too.
		if r.End >= loss && r.Outcome.Failed() {
			z.FailedAfterLoss++
		}
	}
	z.SpillSeconds = optSecs(spill)
	return z
}

// zoneBudget is ScenarioZoneLoss's failure budget: the requests written to
// the killed replicas and unanswered, as in ScenarioKill; with the strict
// policy every request that failed from the loss on (the calls stop, as
// the policy says), so only a failure before the loss is over it.
func zoneBudget(s Summary) (int, string) {
	if s.Zones != nil && s.Zones.Policy == ZoneStrict && s.Zones.ZoneAware {
		return s.Zones.FailedAfterLoss,
			"requests that failed from the zone's loss on (those written to the killed replicas among them), which the strict zone policy stops"
	}
	return s.WrittenUnanswered, "requests written to the killed replicas and unanswered"
}

// zonesHeld reports whether the zone policy held: a zone-aware consumer
// sent nothing to the other zone before the loss, and with the strict
// policy nothing after it either.
func zonesHeld(z *ZoneSummary) bool {
	if z == nil || !z.ZoneAware {
		return true
	}
	return z.RemoteBeforeLoss == 0 && (z.Policy != ZoneStrict || z.RemoteAfterLoss == 0)
}

// zoneLossVerdict explains a ScenarioZoneLoss run: the failures against the
// budget, the spill instant and the events' instants.
func zoneLossVerdict(s Summary) string {
	z := s.Zones
	if z == nil {
		return fmt.Sprintf("ERROR: no zone-loss findings (%d of %d requests failed)", s.Failed, s.Requests)
	}
	budget := 0
	if s.Budget != nil {
		budget = *s.Budget
	}
	var killed []string
	for _, e := range s.Events {
		killed = append(killed, fmt.Sprintf("r%d dropped by the discovery after %s, last sent a request after %s",
			e.Replica, after(e.RegistryDecisionSeconds, e.FaultSeconds), after(e.LastSentSeconds, e.FaultSeconds)))
	}
	what := fmt.Sprintf("zone %s (%d replicas) was killed at %.2fs; %s", z.ConsumerZone, len(s.Events), z.LossSeconds, strings.Join(killed, ", "))
	spill := "no request spilled to zone " + zoneRemote
	if z.SpillSeconds != nil {
		spill = fmt.Sprintf("the first request spilled to zone %s at %.2fs (%.2fs after the loss), %d in all", zoneRemote, *z.SpillSeconds, *z.SpillSeconds-z.LossSeconds, z.RemoteAfterLoss)
	}
	policy := "zone policy " + z.Policy
	if !z.ZoneAware {
		policy = "the naive consumer knows no zones and sent to both all along"
	}
	head := fmt.Sprintf("%d of %d requests failed (%s), budget %d (%s)", s.Failed, s.Requests, kindList(s.FailuresByKind), budget, s.BudgetReason)
	switch {
	case s.Pass && z.Policy == ZoneStrict && z.ZoneAware:
		return fmt.Sprintf("PASS: the calls stopped as zone policy strict says: %s; %s; %s", head, spill, what)
	case s.Pass:
		return fmt.Sprintf("PASS: %s; %s (%s); %s", head, spill, policy, what)
	case !zonesHeld(z):
		return fmt.Sprintf("FAIL: the zone policy did not hold: %d requests went to zone %s before the loss and %d after it (%s); %s; %s",
			z.RemoteBeforeLoss, zoneRemote, z.RemoteAfterLoss, policy, head, what)
	}
	return fmt.Sprintf("FAIL: %s, over the budget; %s (%s); %s", head, spill, policy, what)
}

// validateZoneLoss checks the settings ScenarioZoneLoss needs.
func (c Config) validateZoneLoss() error {
	if !slices.Contains(ZonePolicies, c.ZonePolicy) {
		return fmt.Errorf("--zone-policy: %q is not a zone policy: want one of %v", c.ZonePolicy, ZonePolicies)
	}
	if c.Replicas < 2 {
		return fmt.Errorf("--scenario zone-loss: --replicas %d: needs at least 2 (one zone of them is killed, the other must remain)", c.Replicas)
	}
	return nil
}
