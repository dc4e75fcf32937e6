package main

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/registry/consul/consultest"
	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
)

// zoneLossJSON is the zone-loss part of `drill --json`.
type zoneLossJSON struct {
	Strategies []struct {
		Zones *zoneFindings `json:"zone_loss"`
	} `json:"strategies"`
}

// zoneFindings are a zone-loss run's findings in `drill --json`.
type zoneFindings struct {
	Policy           string            `json:"zone_policy"`
	ZoneAware        bool              `json:"zone_aware"`
	ConsumerZone     string            `json:"consumer_zone"`
	Zones            map[string]string `json:"replica_zones"`
	Loss             float64           `json:"zone_loss_s"`
	RemoteBeforeLoss int               `json:"remote_zone_requests_before_loss"`
	Spill            *float64          `json:"spill_s"`
	RemoteAfterLoss  int               `json:"remote_zone_requests_after_loss"`
	FailedAfterLoss  int               `json:"failed_after_loss"`
}

// zoneLossArgs: 4 replicas (r1, r2 in zone a with the consumers; r3, r4
// in zone b), readiness probes every 500 ms.
var zoneLossArgs = []string{"drill", "--json", "--scenario", "zone-loss", "--rate", "200", "--replicas", "4",
	"--baseline", "1s", "--tail", "1s", "--discovery-interval", "500ms"}

// TestDrillScenarioZoneLoss: every instance of the consumers' zone is
// killed at once. The zone-aware drainkit consumer kept every request in
// its zone before, and spills to the other zone at once, resending the
// refused requests: the failures stay within the written-unanswered
// budget. The naive consumer, round robin over both zones, keeps sending
// to the dead ones until the probes drop them and fails over the budget
// (the check can fail). With --zone-policy strict the calls stop instead:
// nothing goes to the other zone and the requests fail. Registries:
// TestDrillScenarioZoneLossRegistries; --exec of the README program:
// TestDrillEveryScenarioOnExec.
func TestDrillScenarioZoneLoss(t *testing.T) {
	parallelDrill(t, 200)
	t.Run("drainkit consumer spills", func(t *testing.T) {
		r := drainkit(t, 2*time.Minute, shortEnv, append(zoneLossArgs, "--consumer", "drainkit")...)
		s, z := checkZoneLoss(t, r, "spill")
		if r.code != 0 || !s.Pass || s.Failed > *s.Budget {
			t.Errorf("exit %d: %d failed %v, budget %d: want within the budget\nstderr:\n%s", r.code, s.Failed, s.Kinds, *s.Budget, r.stderr)
		}
		if !z.ZoneAware || z.RemoteBeforeLoss != 0 || z.Spill == nil || *z.Spill < z.Loss || z.RemoteAfterLoss == 0 {
			t.Errorf("zones %+v: want every request in zone a before the loss and a spill to zone b after it", *z)
		}
	})
	t.Run("naive consumer", func(t *testing.T) {
		r := drainkit(t, 2*time.Minute, shortEnv, append(zoneLossArgs, "--consumer", "naive")...)
		s, z := checkZoneLoss(t, r, "spill")
		if r.code != 1 || s.Pass || s.Failed <= *s.Budget || s.Kinds["refused"] == 0 {
			t.Errorf("exit %d: %d failed %v, budget %d: want refused requests over the budget and exit 1", r.code, s.Failed, s.Kinds, *s.Budget)
		}
		if z.ZoneAware || z.RemoteBeforeLoss == 0 {
			t.Errorf("zones %+v: the naive consumer knows no zones and sends to both", *z)
		}
	})
	t.Run("drainkit consumer strict", func(t *testing.T) {
		r := drainkit(t, 2*time.Minute, shortEnv, append(zoneLossArgs, "--consumer", "drainkit", "--zone-policy", "strict")...)
		s, z := checkZoneLoss(t, r, "strict")
		if r.code != 0 || !s.Pass || s.Failed == 0 || s.Kinds["no_endpoint"] == 0 || !strings.Contains(s.Verdict, "calls stopped") {
			t.Errorf("exit %d: %d failed %v: want the calls stopped (no_endpoint) as the strict policy says\n%s", r.code, s.Failed, s.Kinds, s.Verdict)
		}
		if z.RemoteBeforeLoss != 0 || z.RemoteAfterLoss != 0 || z.Spill != nil || z.FailedAfterLoss == 0 {
			t.Errorf("zones %+v: want nothing in zone b and the requests after the loss failed", *z)
		}
	})
	t.Run("bad zone policy", func(t *testing.T) {
		r := drainkit(t, 30*time.Second, nil, "drill", "--scenario", "zone-loss", "--zone-policy", "nearest")
		if r.code != 2 || !strings.Contains(r.stderr, "--zone-policy") {
			t.Errorf("exit %d, stderr %q: want 2 naming --zone-policy", r.code, r.stderr)
		}
	})
}

// TestDrillScenarioZoneLossRegistries: zone-loss with Consul, etcd and Nacos, whose
// replicas register their zone (registry.meta, DRAINKIT_REGISTRY_META from
// the drill) and whose Sources deliver it: no relay adds it. The drainkit
// consumer kept every request in zone a before the loss and spills within
// the budget; the naive one, which knows no zones, fails over it until the
// registry drops the killed replicas (Consul's TTL check, etcd's lease,
// both 2 s here, so that the registry's decision falls within the run;
// Nacos's closed connection).
func TestDrillScenarioZoneLossRegistries(t *testing.T) {
	env := append(slices.Clip(shortEnv), "DRAINKIT_REGISTRY_TTL=2s", "DRAINKIT_REGISTRY_ETCD_TTL=2s")
	for _, reg := range []struct {
		name  string
		flags func(t *testing.T) []string
	}{
		{"consul", func(t *testing.T) []string { return []string{"--consul", consultest.Start(t).HTTPAddr} }},
		{"etcd", func(t *testing.T) []string { return []string{"--etcd", etcdtest.Start(t).Endpoint} }},
		// Nacos drops a killed instance when its gRPC connection closes;
		// the naive consumers poll every second to see it within the run.
		{"nacos", func(t *testing.T) []string { return []string{"--nacos", sharedNacos(t).Addr, "--nacos-poll", "1s"} }},
	} {
		t.Run(reg.name, func(t *testing.T) {
			args := append(slices.Clip(zoneLossArgs), append(reg.flags(t), "--tail", "4s")...)
			t.Run("drainkit consumer spills", func(t *testing.T) {
				r := drainkit(t, 2*time.Minute, env, append(args, "--consumer", "drainkit")...)
				s, z := checkZoneLoss(t, r, "spill")
				if r.code != 0 || !s.Pass || s.Failed > *s.Budget {
					t.Errorf("exit %d: %d failed %v, budget %d: want within the budget\nstderr:\n%s", r.code, s.Failed, s.Kinds, *s.Budget, r.stderr)
				}
				if !z.ZoneAware || z.RemoteBeforeLoss != 0 || z.Spill == nil || z.RemoteAfterLoss == 0 {
					t.Errorf("zones %+v: want every request in zone a before the loss (the registered zone) and a spill to zone b after it", *z)
				}
			})
			t.Run("naive consumer", func(t *testing.T) {
				r := drainkit(t, 2*time.Minute, env, append(args, "--consumer", "naive")...)
				s, z := checkZoneLoss(t, r, "spill")
				if r.code != 1 || s.Pass || s.Failed <= *s.Budget {
					t.Errorf("exit %d: %d failed %v, budget %d: want failures over the budget and exit 1", r.code, s.Failed, s.Kinds, *s.Budget)
				}
				if z.ZoneAware || z.RemoteBeforeLoss == 0 {
					t.Errorf("zones %+v: the naive consumer knows no zones and sends to both", *z)
				}
			})
		})
	}
}

// checkZoneLoss checks the shape of a zone-loss drill: one run, a budget,
// one SIGKILL per replica of zone a with the four instants, the zones and
// the policy.
func checkZoneLoss(t *testing.T, r result, policy string) (scenarioRun, *zoneFindings) {
	t.Helper()
	out := parseScenarios(t, r)
	var zj zoneLossJSON
	if err := json.Unmarshal([]byte(r.stdout), &zj); err != nil {
		t.Fatal(err)
	}
	if len(out.Strategies) != 1 || out.Strategies[0].Scenario != "zone-loss" || len(zj.Strategies) != 1 || zj.Strategies[0].Zones == nil {
		t.Fatalf("runs %+v, want one zone-loss run with its zones\nstdout:\n%s", out.Strategies, r.stdout)
	}
	s, z := out.Strategies[0], zj.Strategies[0].Zones
	t.Logf("zones: %+v", *z)
	if s.Budget == nil || !strings.Contains(s.BudgetReason, "written") {
		t.Fatalf("no failure budget: %v %q", s.Budget, s.BudgetReason)
	}
	if z.Policy != policy || z.ConsumerZone != "a" || z.Zones["r1"] != "a" || z.Zones["r2"] != "a" || z.Zones["r3"] != "b" || z.Zones["r4"] != "b" {
		t.Errorf("zones %+v: want policy %s, r1 and r2 in a with the consumers, r3 and r4 in b", *z, policy)
	}
	if len(s.Events) != 2 {
		t.Fatalf("events %+v, want the kills of r1 and r2", s.Events)
	}
	for _, e := range s.Events {
		if e.Kind != "SIGKILL" || e.Decision == nil || e.ConsumerView == nil || e.DecisionRevision == nil || e.ConsumerRevision == nil || *e.Decision < e.Fault || math.Abs(e.Fault-z.Loss) > 0.01 {
			t.Errorf("event %+v: want a SIGKILL at the loss with the registry's decision and a consumer view", e)
		}
	}
	return s, z
}
