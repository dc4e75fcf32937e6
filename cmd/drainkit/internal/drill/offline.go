package drill

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/registry/nacos"
)

// offlineThenKill is StrategyOfflineKill's stop: the operator marks old
// offline in the Nacos console (the server's open API, as the console
// calls it; bounded by the grace period), waits Config.OfflineWait, then
// kill -9s it. The offline's time is the replica's Offlined; a failed
// offline fails the run, since the drill would otherwise show a plain kill.
func (s *strategyRun) offlineThenKill(ctx context.Context, old *Replica) error {
	api := newNacosAPI(s.cfg.nacosServer())
	defer api.close()
	octx, cancel := context.WithTimeout(ctx, s.cfg.Timings.GracePeriod)
	err := api.setEnabled(octx, s.cfg.serviceName(s.name), old.HTTPAddr, false)
	cancel()
	if err != nil {
		return fmt.Errorf("%s: replica %d: %w", s.name, old.ID, err)
	}
	old.noteOffline()
	if err := syncx.Sleep(ctx, s.cfg.OfflineWait); err != nil {
		return err
	}
	return old.KillNow()
}

// nacosServer is the Nacos server of Config.Nacos with the drill's login.
func (c Config) nacosServer() nacos.Server {
	return nacos.Server{Addrs: []string{c.Nacos}, Username: c.NacosUsername, Password: c.NacosPassword}
}

// nacosDiscovery says how each consumer kind learns the instances with
// Config.Nacos, for the reports.
func (c Config) nacosDiscovery() string {
	return fmt.Sprintf("drainkit consumers follow registry/nacos's Source (a snapshot, then reads on every push and every 2s); naive consumers poll GET /v1/ns/instance/list?healthyOnly=true every %s, as a Nacos 1.x client does", c.NacosPoll)
}

// offlineKillRestart says what StrategyOfflineKill does to an old replica.
func (c Config) offlineKillRestart() string {
	return fmt.Sprintf("the console's offline (PUT /v3/admin/ns/instance enabled=false), %s later SIGKILL", c.OfflineWait)
}

// offlineKillVerdict judges StrategyOfflineKill, the seeds' Incident A:
// what the operator must wait between the console's offline and kill -9.
// That wait is the consumers' staleness from the offline (the last request
// a consumer sent an offlined replica, which the drill measures whether or
// not the process still answered), so the verdict names it, rounded up to
// the next whole second: a shorter Config.OfflineWait kills a replica that
// consumers still call. head is the FAIL head, or "" for a run that lost
// nothing.
func offlineKillVerdict(c Config, s Summary, head string) string {
	need := time.Duration(math.Floor(s.StalenessSeconds)+1) * time.Second
	atLeast := ""
	if s.StalenessCut {
		atLeast = "at least "
	}
	if head == "" {
		return fmt.Sprintf("PASS: 0 of %d requests failed: the operator waited %s between the console's offline and kill -9, and consumers kept sending to the offlined replica for %s after the offline",
			s.Requests, c.OfflineWait, sending(s))
	}
	return fmt.Sprintf("%s: the operator killed each replica %s after the console's offline, but consumers kept sending to it for %s after the offline: an operator must wait %s%s (--offline-wait) before kill -9, or stop the process with SIGTERM and let drainkit drain it (it keeps serving after an offline)",
		head, c.OfflineWait, sending(s), atLeast, need)
}
