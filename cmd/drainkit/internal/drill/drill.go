// Package drill runs drainkit's rolling-restart drill: for each strategy it
// starts replicas of a service as child processes, sends paced load from
// consumers that discover the instances the way real ones do, replaces every
// replica one by one, records every request, and reports what failed and
// why (table, JSON, HTML report with a timeline chart).
//
// Out of scope: remote hosts (everything runs on 127.0.0.1), HTTPS, and load
// shapes other than a constant rate of one request (Config.Method, Path
// and Body; GET / by default), or of one gRPC call or held stream
// (Config.Protocol).
package drill

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// Result is a whole drill: the configuration and one run per scenario and
// strategy, scenario by scenario in the order of Config.Scenarios, each in
// the order of Config.Strategies.
type Result struct {
	Config Config
	Runs   []StrategyRun
	Wall   time.Duration
}

// Run runs every strategy of cfg, each with its own replicas, discovery
// and consumers, and returns when all are done. By default the strategies
// run concurrently: they start their load together (once every strategy's
// first replicas are listed) and stop it together (once every strategy's
// rolling restart, tail and wait for stale consumers are over), so that
// each is measured over the same span; all offsets count from the drill's
// start. With Config.Sequential they run one after another, each from its
// own start. progress may be nil. It returns an error only for a bad
// configuration; a strategy that could not complete has StrategyRun.Err
// set.
func Run(ctx context.Context, cfg Config, progress *Progress) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	start := time.Now()
	// The drill's own probes and GET /state polls: short timeouts, no proxy,
	// no keep-alive (replicas come and go).
	client := &http.Client{
		Timeout:   time.Second,
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
	}
	defer client.CloseIdleConnections()
	res := &Result{Config: cfg}
	for i, name := range cfg.scenarios() {
		sc, _ := scenarioNamed(name) // Validate checked the names
		sstart := start
		if i > 0 {
			sstart = time.Now() // each scenario's times count from its own start
		}
		res.Runs = append(res.Runs, cfg.runScenario(ctx, sc, sstart, client, progress)...)
		if ctx.Err() != nil {
			break
		}
	}
	res.Wall = time.Since(start)
	return res, nil
}

// runScenario runs every strategy sc runs, concurrently unless
// Config.Sequential.
func (c Config) runScenario(ctx context.Context, sc Scenario, start time.Time, client *http.Client, progress *Progress) []StrategyRun {
	var blockDir string
	if (sc.Name == ScenarioSlowProbe || sc.Name == ScenarioBrownout) && c.Exec == "" {
		dir, err := os.MkdirTemp("", "drainkit-drill-checks-")
		if err != nil {
			return []StrategyRun{{Scenario: sc.Name, Name: c.strategyNames()[0], Start: start, Err: fmt.Errorf("slow-probe: %w", err)}}
		}
		defer os.RemoveAll(dir)
		blockDir = dir
	}
	runs := c.strategyRuns(sc, start, client, blockDir)
	stopProgress := progress.startFor(ctx, start, runs)
	defer stopProgress()
	out := make([]StrategyRun, len(runs))
	if c.Sequential {
		for i, sr := range runs {
			sr.start = time.Now()
			out[i] = sr.run(ctx)
		}
		return out
	}
	var wg sync.WaitGroup
	for i, sr := range runs {
		wg.Go(func() { out[i] = sr.run(ctx) })
	}
	wg.Wait()
	return out
}

// proxied puts a registry proxy between the run and the registry: its
// replicas and discovery get the proxy's address (ScenarioRegistryOutage).
// A proxy that cannot listen fails the run when it starts.
func (s *strategyRun) proxied() {
	target := cmp.Or(s.cfg.Etcd, s.cfg.Consul)
	p, err := newOutageProxy(target)
	if err != nil {
		s.newDisc = func() (Discovery, error) { return nil, fmt.Errorf("registry-outage: proxy to %s: %w", target, err) }
		return
	}
	s.proxy = p
	via := s.cfg
	if via.Etcd != "" {
		via.Etcd = p.Addr()
	} else {
		via.Consul = p.Addr()
	}
	s.launch = via.launch(s.name)
	client := s.client
	s.newDisc = func() (Discovery, error) { return via.newDiscovery(s.name, client) }
}

// strategyRuns prepares one run per strategy, sharing the start and end
// barriers (each its own with Sequential).
func (c Config) strategyRuns(sc Scenario, start time.Time, client *http.Client, blockDir string) []*strategyRun {
	names := c.scenarioStrategies(sc)
	parties := len(names)
	if c.Sequential {
		parties = 1
	}
	startGate, endGate := newBarrier(parties), newBarrier(parties)
	runs := make([]*strategyRun, len(names))
	for i, name := range names {
		if c.Sequential {
			startGate, endGate = newBarrier(1), newBarrier(1)
		}
		label := name
		if sc.Name != ScenarioRolling {
			label = sc.Name + "/" + name
		}
		sr := &strategyRun{cfg: c, scenario: sc, name: name, launch: c.launch(name), st: &status{name: label, phase: "waiting"}, client: client,
			start: start, startGate: startGate, endGate: endGate, arriveStart: startGate.party(), arriveEnd: endGate.party()}
		sr.newDisc = func() (Discovery, error) { return c.newDiscovery(name, client) }
		if sc.Name == ScenarioOutage {
			sr.proxied()
		}
		if sc.Name == ScenarioBrownout {
			sr.brownoutLaunch(blockDir)
		}
		if sc.Name == ScenarioLongLived && c.Exec == "" && !c.grpc() {
			// The example serves gRPC too: long-lived holds gRPC streams.
			sr.launch.GRPC, sr.launch.HTTPLoad = true, true
		}
		if sc.Name == ScenarioSlowProbe {
			sr.launch.Env = append(slices.Clip(sr.launch.Env), c.checksEnv()...)
			if c.Exec == "" {
				sr.blockDir = blockDir
				sr.launch.Args = append(slices.Clip(sr.launch.Args), "--check-block-dir", blockDir)
			}
		}
		sr.st.rec = sr.recorder
		runs[i] = sr
	}
	return runs
}

// launch returns how to start a replica of strategy name.
func (c Config) launch(name string) Launch {
	env := append(append([]string(nil), c.Env...), c.timingEnv()...)
	if c.Env == nil {
		env = append(os.Environ(), c.timingEnv()...)
	}
	env = append(env, c.registryEnv(c.serviceName(name))...)
	if c.Exec != "" {
		args := append([]string(nil), c.ExecArgs...)
		return Launch{Command: c.Exec, Args: args, Env: env, Listeners: listenerFlags(c.Exec, args, env)}
	}
	args := []string{"serve", "--strategy", name}
	if c.registries() > 0 {
		args = append(args, "--service", c.serviceName(name))
	}
	return Launch{Command: c.Self, Args: args, Env: env, GRPC: c.grpc()}
}

// serviceName is the service a strategy's replicas register as (in Consul,
// etcd or Nacos).
func (c Config) serviceName(strategy string) string {
	if c.Exec != "" {
		if c.Service != "" {
			return c.Service
		}
		return filepath.Base(c.Exec)
	}
	return fmt.Sprintf("drainkit-drill-%s-%d", strategy, os.Getpid())
}

// newDiscovery returns the discovery for one strategy run.
func (c Config) newDiscovery(strategy string, client *http.Client) (Discovery, error) {
	if c.Consul != "" {
		return NewConsulDiscovery(c.Consul, c.serviceName(strategy))
	}
	if c.Etcd != "" {
		return NewEtcdDiscovery(c.Etcd, c.etcdPrefix(), c.serviceName(strategy))
	}
	if c.Nacos != "" {
		return NewNacosDiscovery(c.nacosServer(), c.serviceName(strategy), c.NacosPoll)
	}
	return NewProbeDiscovery(c.DiscoveryInterval, c.FailureThreshold, client), nil
}
