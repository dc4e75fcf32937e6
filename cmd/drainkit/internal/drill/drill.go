// Package drill runs drainkit's rolling-restart drill: for each strategy it
// starts replicas of a service as child processes, sends paced load from
// consumers that discover the instances the way real ones do, replaces every
// replica one by one, records every request, and reports what failed and
// why (table, JSON, HTML report with a timeline chart).
//
// Out of scope: remote hosts (everything runs on 127.0.0.1), HTTPS, and load
// shapes other than a constant rate of GET /.
package drill

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Result is a whole drill: the configuration and one run per strategy, in
// the order of Config.Strategies.
type Result struct {
	Config Config
	Runs   []StrategyRun
	Wall   time.Duration
}

// Run runs every strategy of cfg concurrently, each with its own replicas,
// discovery and consumers, and returns when all are done. The strategies
// start their load together (once every strategy's first replicas are
// listed) and stop it together (once every strategy's rolling restart, tail
// and wait for stale consumers are over), so that each is measured over the
// same span; all offsets count from the drill's start. progress may be
// nil. It returns an error only for a bad configuration; a strategy that
// could not complete has StrategyRun.Err set.
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

	names := cfg.strategyNames()
	runs := make([]*strategyRun, len(names))
	startGate, endGate := newBarrier(len(names)), newBarrier(len(names))
	for i, name := range names {
		st := &status{name: name, phase: "waiting"}
		sr := &strategyRun{cfg: cfg, name: name, launch: cfg.launch(name), st: st, client: client,
			start: start, startGate: startGate, endGate: endGate, arriveStart: startGate.party(), arriveEnd: endGate.party()}
		sr.newDisc = func() (Discovery, error) { return cfg.newDiscovery(name, client) }
		st.rec = sr.recorder
		runs[i] = sr
	}

	pctx, stopProgress := context.WithCancel(ctx)
	var pwg sync.WaitGroup
	if progress != nil {
		progress.start = start
		for _, sr := range runs {
			progress.statuses = append(progress.statuses, sr.st)
		}
		pwg.Add(1)
		go func() { defer pwg.Done(); progress.run(pctx) }()
	}

	res := &Result{Config: cfg, Runs: make([]StrategyRun, len(runs))}
	var wg sync.WaitGroup
	for i, sr := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res.Runs[i] = sr.run(ctx)
		}()
	}
	wg.Wait()
	stopProgress()
	pwg.Wait()
	res.Wall = time.Since(start)
	return res, nil
}

// launch returns how to start a replica of strategy name.
func (c Config) launch(name string) Launch {
	env := append(append([]string(nil), c.Env...), c.timingEnv()...)
	if c.Env == nil {
		env = append(os.Environ(), c.timingEnv()...)
	}
	if c.Consul != "" {
		env = append(env, "CONSUL_HTTP_ADDR="+c.Consul)
	}
	if c.Etcd != "" {
		env = append(env, "ETCD_ENDPOINTS="+c.Etcd)
	}
	if c.Exec != "" {
		return Launch{Command: c.Exec, Args: append([]string(nil), c.ExecArgs...), Env: env}
	}
	args := []string{"serve", "--strategy", name}
	if c.Consul != "" || c.Etcd != "" {
		args = append(args, "--service", c.serviceName(name))
	}
	return Launch{Command: c.Self, Args: args, Env: env}
}

// serviceName is the Consul service a strategy's replicas register as.
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
		return NewEtcdDiscovery(c.Etcd, c.serviceName(strategy))
	}
	return NewProbeDiscovery(c.DiscoveryInterval, c.FailureThreshold, client), nil
}
