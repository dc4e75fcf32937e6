package kubedrill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/drainkit/drainkit/cmd/drainkit/internal/kubedrill/kubeload"
)

// maxLag is how far behind its schedule a load pod may fall before the run
// is invalid (as the local drill's drill.MaxPacingLag).
const maxLag = time.Second

// Run runs the drill: it creates c.Namespace (or a new name), deploys
// every strategy, starts the load, restarts every Deployment at once,
// waits until every old pod has exited and c.Tail has passed, stops the
// load and deletes the namespace. progress gets one line per step.
func Run(ctx context.Context, c Config, progress io.Writer) (*Result, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	if c.Namespace == "" {
		c.Namespace = fmt.Sprintf("drainkit-drill-%d", time.Now().Unix())
	}
	step := func(format string, a ...any) { fmt.Fprintf(progress, "drill --kubernetes: "+format+"\n", a...) }
	cluster := kubectl{bin: c.Kubectl, kubeconfig: c.Kubeconfig}
	k := cluster
	k.namespace = c.Namespace
	if _, err := cluster.run(ctx, nil, "create", "namespace", c.Namespace); err != nil {
		return nil, err
	}
	defer func() {
		// Not ctx: the namespace goes even when the drill was
		// interrupted or timed out.
		dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer dcancel()
		step("deleting namespace %s", c.Namespace)
		if _, err := cluster.run(dctx, nil, "delete", "namespace", c.Namespace, "--wait=true"); err != nil {
			step("%v", err)
		}
	}()
	r := &run{c: c, k: k, t: newTracker(), step: step}
	return r.run(ctx)
}

// run is one drill's state.
type run struct {
	c       Config
	k       kubectl
	t       *tracker
	step    func(format string, a ...any)
	streams []*stream // every kubectl it started, waited for at its end
	// rulesRead: kube-proxy's rules are read (Result.RulesRead).
	rulesRead bool
}

// loadStream is a load pod's log: started closes at its "started" line;
// summary is set by its "summary" line.
type loadStream struct {
	started chan struct{}
	once    sync.Once
	mu      sync.Mutex
	summary *kubeload.Summary
	s       *stream
}

// loadKey names a load pod: its strategy and load kind.
type loadKey struct{ strategy, kind string }

func (k loadKey) pod() string { return loadPodName(k.strategy, k.kind) }

func (r *run) run(ctx context.Context) (*Result, error) {
	c, k := r.c, r.k
	// Background readers end with watchCtx; the streams are waited for
	// before Run returns, so nothing outlives it.
	watchCtx, stopWatches := context.WithCancel(ctx)
	var readers sync.WaitGroup
	defer func() {
		stopWatches()
		for _, s := range r.streams {
			_ = s.wait()
		}
		readers.Wait()
	}()
	for _, w := range []struct {
		kind string
		fn   func(time.Time, watchEvent)
	}{{"pods", r.t.onPod}, {"endpointslices", r.t.onSlice}} {
		s, err := k.watch(watchCtx, w.kind, w.fn)
		if err != nil {
			return nil, err
		}
		r.streams = append(r.streams, s)
	}
	if slices.ContainsFunc(c.Loads, func(l string) bool { return LoadKinds[l].ownImage }) {
		m, err := rbacManifests()
		if err != nil {
			return nil, err
		}
		if _, err := k.run(ctx, m, "apply", "-f", "-"); err != nil {
			return nil, err
		}
	}
	res := &Result{Namespace: c.Namespace, Replicas: c.Replicas, RatePerSecond: c.Rate, Loads: c.Loads,
		PreStopSleepS: int(c.PreStopSleep / time.Second), Concurrent: c.Concurrent}
	if c.Rules == "on" || (c.Rules == "auto" && rulesReadable(ctx)) {
		res.RulesRead, r.rulesRead = true, true
		readers.Go(func() { pollRules(watchCtx, r.t, c.Namespace) })
	}
	groups := [][]string{c.Strategies}
	if !c.Concurrent {
		groups = nil
		for _, s := range c.Strategies {
			groups = append(groups, []string{s})
		}
	}
	for _, g := range groups {
		rs, err := r.group(ctx, watchCtx, g)
		if err != nil {
			return nil, err
		}
		res.Strategies = append(res.Strategies, rs...)
	}
	sortStrategies(res.Strategies, c.Loads)
	res.Invalid = invalidReason(res)
	return res, nil
}

// group drills the strategies of g at once: deploy, load, restart, wait
// for every old pod to exit, tail, stop the load, delete the Deployments.
func (r *run) group(ctx, watchCtx context.Context, g []string) ([]StrategyResult, error) {
	c, k := r.c, r.k
	for _, s := range g {
		m, err := c.serverManifests(s)
		if err != nil {
			return nil, err
		}
		if _, err := k.run(ctx, m, "apply", "-f", "-"); err != nil {
			return nil, err
		}
	}
	r.step("deployed %s (%d replicas each), waiting for them to be ready", strings.Join(g, ", "), c.Replicas)
	for _, s := range g {
		if _, err := k.run(ctx, nil, "rollout", "status", "deployment/"+deploymentName(s), "--timeout", "3m"); err != nil {
			return nil, err
		}
	}
	old, err := r.waitServerPods(ctx, g)
	if err != nil {
		return nil, err
	}
	if r.rulesRead {
		// Ready pods are not yet kube-proxy's: on a busy node its rules
		// for a new Service come a second or more later, and a request
		// through the ClusterIP meanwhile is refused (measured: 8 failures
		// before the restart, an invalid run). Where the rules are read,
		// the load waits for them.
		if err := r.waitInRules(ctx, old); err != nil {
			return nil, err
		}
	}
	// The old pods' logs, for their SIGTERM lines: every server pod of g
	// now running, followed until its container exits.
	selector := fmt.Sprintf("%s=server,%s in (%s)", labelRole, labelStrategy, strings.Join(g, ","))
	logs, err := k.lines(watchCtx, func(line string) {
		if pod, mark, at, ok := podLogLine(line); ok {
			r.t.onLog(pod, mark, at)
		}
	}, "logs", "--follow", "--prefix", "--tail=-1", "--max-log-requests", fmt.Sprint(len(g)*c.Replicas+5), "-l", selector)
	if err != nil {
		return nil, err
	}
	r.streams = append(r.streams, logs)
	loads, err := r.startLoads(ctx, watchCtx, g)
	if err != nil {
		return nil, err
	}
	r.step("load running (%g requests/s per strategy and load kind, %s); baseline %s", c.Rate, strings.Join(c.Loads, ", "), c.Baseline)
	if err := sleepCtx(ctx, c.Baseline); err != nil {
		return nil, err
	}
	restart := time.Now()
	var deps []string
	for _, s := range g {
		deps = append(deps, "deployment/"+deploymentName(s))
	}
	if _, err := k.run(ctx, nil, append([]string{"rollout", "restart"}, deps...)...); err != nil {
		return nil, err
	}
	r.step("rollout restart of %s; waiting for its %d old pods to exit", strings.Join(g, ", "), len(g)*c.Replicas)
	if err := r.waitExited(ctx, old); err != nil {
		return nil, err
	}
	r.step("every old pod exited; tail %s", c.Tail)
	if err := sleepCtx(ctx, c.Tail); err != nil {
		return nil, err
	}
	sums, err := r.stopLoads(ctx, loads)
	if err != nil {
		return nil, err
	}
	// The next group gets the machine to itself.
	if _, err := k.run(ctx, nil, "delete", "deployment,service", "-l", selector, "--wait=false"); err != nil {
		return nil, err
	}
	tracks := r.t.snapshot()
	var out []StrategyResult
	for _, s := range g {
		for _, kind := range c.Loads {
			var mine []podTrack
			for _, name := range old[s] {
				mine = append(mine, tracks[name])
			}
			out = append(out, build(s, kind, restart, mine, sums[loadKey{s, kind}]))
		}
	}
	return out, nil
}

// waitFor calls cond with the tracks at each change until it returns "";
// what it returns otherwise says what is awaited, for the error when ctx
// ends first.
func (r *run) waitFor(ctx context.Context, cond func(map[string]podTrack) string) error {
	for {
		changed := r.t.changed.Wait()
		left := cond(r.t.snapshot())
		if left == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", left, ctx.Err())
		case <-changed:
		}
	}
}

// waitServerPods waits until the pod watch lists c.Replicas running server
// pods with an IP per strategy, and returns their names by strategy.
func (r *run) waitServerPods(ctx context.Context, g []string) (map[string][]string, error) {
	out := map[string][]string{}
	err := r.waitFor(ctx, func(tracks map[string]podTrack) string {
		clear(out)
		for name, p := range tracks {
			if p.strategy != "" && p.ip != "" && p.deleted.IsZero() {
				out[p.strategy] = append(out[p.strategy], name)
			}
		}
		for _, s := range g {
			if len(out[s]) != r.c.Replicas {
				return fmt.Sprintf("the pod watch lists %d running pods of %s, want %d", len(out[s]), s, r.c.Replicas)
			}
		}
		return ""
	})
	return out, err
}

// waitInRules waits until kube-proxy's rules send to every pod in pods.
func (r *run) waitInRules(ctx context.Context, pods map[string][]string) error {
	return r.waitFor(ctx, func(tracks map[string]podTrack) string {
		var left []string
		for _, names := range pods {
			for _, n := range names {
				if !tracks[n].inRules {
					left = append(left, n)
				}
			}
		}
		if len(left) == 0 {
			return ""
		}
		return "kube-proxy's rules did not send to " + strings.Join(left, ", ") + " yet"
	})
}

// waitExited waits until every pod in old has exited.
func (r *run) waitExited(ctx context.Context, old map[string][]string) error {
	return r.waitFor(ctx, func(tracks map[string]podTrack) string {
		var left []string
		for _, names := range old {
			for _, n := range names {
				if tracks[n].exited.IsZero() {
					left = append(left, n)
				}
			}
		}
		if len(left) == 0 {
			return ""
		}
		return "old pods " + strings.Join(left, ", ") + " had not exited"
	})
}

// startLoads creates the load pods (one per strategy of g and load kind),
// follows their logs and waits for each to start sending.
func (r *run) startLoads(ctx, watchCtx context.Context, g []string) (map[loadKey]*loadStream, error) {
	c, k := r.c, r.k
	loads := map[loadKey]*loadStream{}
	var keys []loadKey
	for _, s := range g {
		ip, err := k.run(ctx, nil, "get", "service/"+deploymentName(s), "-o", "jsonpath={.spec.clusterIP}")
		if err != nil {
			return nil, err
		}
		for _, kind := range c.Loads {
			m, err := c.loadManifest(s, kind, strings.TrimSpace(string(ip)))
			if err != nil {
				return nil, err
			}
			if _, err := k.run(ctx, m, "apply", "-f", "-"); err != nil {
				return nil, err
			}
			keys = append(keys, loadKey{s, kind})
		}
	}
	for _, key := range keys {
		pod := "pod/" + key.pod()
		if _, err := k.run(ctx, nil, "wait", "--for=condition=Ready", pod, "--timeout=3m"); err != nil {
			return nil, err
		}
		ls := &loadStream{started: make(chan struct{})}
		loads[key] = ls
		st, err := k.lines(watchCtx, func(line string) {
			l, ok := loadLogLine(line)
			switch {
			case !ok:
			case l.Kind == "started":
				ls.once.Do(func() { close(ls.started) })
			case l.Kind == "summary":
				ls.mu.Lock()
				ls.summary = l.Summary
				ls.mu.Unlock()
			}
		}, "logs", "--follow", pod)
		if err != nil {
			return nil, err
		}
		ls.s = st
		r.streams = append(r.streams, st)
	}
	for key, ls := range loads {
		select {
		case <-ls.started:
		case <-ls.s.done:
			return nil, fmt.Errorf("load pod %s: its log ended before it started sending: %v", key.pod(), ls.s.err)
		case <-ctx.Done():
			return nil, fmt.Errorf("load pod %s did not start sending: %w", key.pod(), ctx.Err())
		}
	}
	return loads, nil
}

// stopLoads deletes the load pods (SIGTERM: each stops sending, waits for
// what is in flight and prints its summary) and returns the summaries by
// strategy and load kind once their logs ended.
func (r *run) stopLoads(ctx context.Context, loads map[loadKey]*loadStream) (map[loadKey]*kubeload.Summary, error) {
	var pods []string
	for key := range loads {
		pods = append(pods, "pod/"+key.pod())
	}
	if _, err := r.k.run(ctx, nil, append([]string{"delete", "--wait=false"}, pods...)...); err != nil {
		return nil, err
	}
	out := map[loadKey]*kubeload.Summary{}
	var errs []error
	for key, ls := range loads {
		if err := ls.s.wait(); err != nil {
			errs = append(errs, err)
		}
		ls.mu.Lock()
		out[key] = ls.summary
		ls.mu.Unlock()
		if out[key] == nil {
			errs = append(errs, fmt.Errorf("load pod %s printed no summary", key.pod()))
		}
	}
	return out, errors.Join(errs...)
}

// invalidReason says why res measured the machine, "" when it did not.
func invalidReason(res *Result) string {
	var why []string
	for _, s := range res.Strategies {
		if s.FailedBeforeRestart > 0 {
			why = append(why, fmt.Sprintf("%s via %s: %d requests failed before the restart", s.Strategy, s.Load, s.FailedBeforeRestart))
		}
		if s.MaxLagMS > maxLag.Milliseconds() {
			why = append(why, fmt.Sprintf("%s via %s: the load fell %d ms behind its schedule (lower --rate)", s.Strategy, s.Load, s.MaxLagMS))
		}
	}
	return strings.Join(why, "; ")
}

// sleepCtx waits d or until ctx ends: the load runs that long (a measured
// span, not a synchronisation).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
