package drill

import (
	"context"
	"fmt"

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
