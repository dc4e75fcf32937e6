package drill

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/consul"
	"github.com/drainkit/drainkit/registry/etcd"
	"github.com/hashicorp/consul/api"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// LateConsumer is a drainkit consumer started during a registry outage
// (ScenarioOutage), as a consumer process restarted then is: it watches the
// registry itself, through the outage proxy, so its first read fails. With
// a last-good snapshot (consumer.WatcherOptions.SnapshotPath, written by the
// same consumer before the outage) it serves the snapshot and its calls
// succeed; without one it has no view, and every call waits for a first
// view until its deadline and fails with consumer.ErrNoInstance.
type LateConsumer struct {
	// Snapshot is true for the consumer configured with a snapshot file.
	Snapshot bool
	// Started is when it started (offset from the run's start).
	Started time.Duration
	// Served is the snapshot file its view came from while it called (its
	// WatchStatus.Snapshot), "" when it served none; Age is that view's age
	// at its first call (negative without a view).
	Served string
	Age    time.Duration
	// Requests it sent during the outage, Failed how many failed, Err the
	// first failure's error.
	Requests, Failed int
	Err              string
}

// lateRequests is how many calls each late consumer makes during the
// outage.
const lateRequests = 20

// registrySource returns a registry watch of the run's service through the
// outage proxy, as a consumer process builds one, and how to release it.
// The etcd watch checks every outage/5 (100ms..1s) that etcd answers, so
// that its first read fails within the outage.
func (s *strategyRun) registrySource() (registry.Source, func(), error) {
	service := s.cfg.serviceName(s.name)
	if s.cfg.Etcd != "" {
		client, err := clientv3.New(clientv3.Config{Endpoints: []string{s.proxy.Addr()}, Logger: zap.NewNop()})
		if err != nil {
			return nil, nil, fmt.Errorf("etcd client through the outage proxy: %w", err)
		}
		check := min(max(s.cfg.Outage/5, 100*time.Millisecond), time.Second)
		src := etcd.NewSource(client, service, etcd.WatchOptions{Prefix: s.cfg.etcdPrefix(), CheckInterval: check})
		return src, func() { _ = client.Close() }, nil
	}
	cfg := api.DefaultConfig()
	cfg.Address = s.proxy.Addr()
	client, err := api.NewClient(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("consul client through the outage proxy: %w", err)
	}
	release := func() {
		if cfg.Transport != nil {
			cfg.Transport.CloseIdleConnections()
		}
	}
	return consul.NewSource(client, service, consul.WatchOptions{}), release, nil
}

// snapshotWait bounds how long the snapshot consumer before the outage, and
// the late consumer with a snapshot, wait for their view. It is a safety
// net, not a pace: both wait on state (a view listing the replicas, the
// snapshot served once the source's first read fails), which a loaded
// machine only delays; a run that reaches it has a real fault.
const snapshotWait = 30 * time.Second

// writeSnapshot runs the snapshot consumer before the outage: a watcher of
// the registry with SnapshotPath, until a view that lists the replicas
// (at least replicas instances) is written to path. A first view may list
// none of them yet (a registry answering before the registrations reach
// it); a snapshot of it would be no last-good view, and an empty one is
// not written at all.
func (s *strategyRun) writeSnapshot(ctx context.Context, path string, replicas int) error {
	src, release, err := s.registrySource()
	if err != nil {
		return err
	}
	defer release()
	w, err := consumer.NewWatcher(consumer.WatcherOptions{Source: src, Service: s.cfg.serviceName(s.name),
		SnapshotPath: path, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	listed := make(chan struct{})
	var once sync.Once
	stop := w.Subscribe(func(v registry.View) {
		if len(v.Instances) >= replicas {
			once.Do(func() { close(listed) })
		}
	})
	wctx, cancel := context.WithTimeout(ctx, snapshotWait)
	defer cancel()
	select {
	case <-listed:
	case <-wctx.Done():
		err = wctx.Err()
	}
	stop()
	n := len(w.View().Instances)
	w.Close() // writes the pending snapshot before it returns
	if err != nil {
		return fmt.Errorf("registry-outage: the snapshot consumer got no view listing the %d replicas before the outage (its view lists %d instances): %w", replicas, n, err)
	}
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("registry-outage: the snapshot consumer wrote no snapshot: %w", err)
	}
	return nil
}

// lateConsumers starts, at the outage's start, one consumer with the
// snapshot at path and one without (lateConsumer); the outage lasts until
// both have ended.
func (s *strategyRun) lateConsumers(ctx context.Context, path string) []LateConsumer {
	out := make([]LateConsumer, 2)
	var wg sync.WaitGroup
	for i, snap := range []string{path, ""} {
		wg.Go(func() { out[i] = s.lateConsumer(ctx, snap) })
	}
	wg.Wait()
	return out
}

// lateConsumer is one of lateConsumers: a drainkit consumer of its own
// registry watch, with the snapshot file (or none, ""), calling the service
// lateRequests times, paced to end at 90 % of the outage. The one without a
// snapshot can get no view: it waits up to 40 % of the outage for one and
// its calls end at 90 % of it, each failing at its deadline. The one with a
// snapshot waits on state, not on the outage's clock: for its view (the
// snapshot, served once the source's first read fails), then each call
// bounded only by the request timeout, so that a loaded machine delays it
// (the outage lasts until it ends) rather than fails it. A consumer that
// cannot be built counts as one failed call with that error.
func (s *strategyRun) lateConsumer(ctx context.Context, snapshot string) LateConsumer {
	started := time.Now()
	lc := LateConsumer{Snapshot: snapshot != "", Started: started.Sub(s.start), Age: -1}
	end := s.outageAt.Add(s.cfg.Outage * 9 / 10)
	viewWait := snapshotWait
	if snapshot == "" {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, end)
		defer cancel()
		viewWait = s.cfg.Outage * 4 / 10
	}
	fail := func(err error) LateConsumer {
		lc.Requests, lc.Failed, lc.Err = 1, 1, err.Error()
		return lc
	}
	src, release, err := s.registrySource()
	if err != nil {
		return fail(err)
	}
	defer release()
	c, err := newDrainkitClientWith(ClientConfig{Service: s.cfg.serviceName(s.name), Views: src, Dial: drillDialer},
		consumer.WatcherOptions{SnapshotPath: snapshot})
	if err != nil {
		return fail(err)
	}
	defer c.Close()
	wctx, wcancel := context.WithTimeout(ctx, viewWait)
	_ = c.w.Wait(wctx) // without a view the calls fail, which is the point
	wcancel()
	if st := c.w.Status(); st.Instances > 0 {
		lc.Served, lc.Age = st.Snapshot, st.Age
	}
	every := time.Until(end) / (lateRequests + 1)
	tick := time.NewTicker(max(every, time.Millisecond))
	defer tick.Stop()
	for range lateRequests {
		rctx, rcancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
		att := c.Do(rctx, s.cfg.request())
		rcancel()
		lc.Requests++
		if Classify(att.Status, att.Err).Failed() {
			lc.Failed++
			if lc.Err == "" {
				lc.Err = attemptError(att)
			}
		}
		select {
		case <-ctx.Done():
			return lc
		case <-tick.C:
		}
	}
	return lc
}

// attemptError describes a failed attempt: its error, else its status.
func attemptError(att Attempt) string {
	if att.Err != nil {
		return att.Err.Error()
	}
	return fmt.Sprintf("HTTP %d", att.Status)
}

// lateConsumersOK reports whether the late consumers behaved as configured:
// the one with a snapshot served it and lost nothing; the one without
// failed every call, naming why (it had no view: were one to succeed, the
// registry was reachable and the outage did not happen).
func lateConsumersOK(lcs []LateConsumer) bool {
	if len(lcs) == 0 {
		return true
	}
	for _, lc := range lcs {
		switch {
		case lc.Requests == 0:
			return false
		case lc.Snapshot && (lc.Failed != 0 || lc.Served == ""):
			return false
		case !lc.Snapshot && (lc.Failed != lc.Requests || !strings.Contains(lc.Err, consumer.ErrNoInstance.Error())):
			return false
		}
	}
	return true
}

// lateConsumersNote says how the consumers started during the outage
// fared.
func lateConsumersNote(lcs []LateConsumer) string {
	var parts []string
	for _, lc := range lcs {
		if lc.Snapshot {
			if lc.Served == "" {
				parts = append(parts, fmt.Sprintf("the consumer started during the outage with a last-good snapshot served none: %d of %d calls failed%s",
					lc.Failed, lc.Requests, errNote(lc.Err)))
				continue
			}
			parts = append(parts, fmt.Sprintf("the consumer started during the outage with a last-good snapshot served it (%s, %.2fs old): %d of %d calls failed%s",
				filepath.Base(lc.Served), lc.Age.Seconds(), lc.Failed, lc.Requests, errNote(lc.Err)))
			continue
		}
		p := fmt.Sprintf("the consumer started during the outage without a snapshot had no view: %d of %d calls failed, each at its deadline%s", lc.Failed, lc.Requests, errNote(lc.Err))
		if lc.Failed < lc.Requests {
			p = fmt.Sprintf("the consumer started during the outage without a snapshot got answers from the registry (%d of %d calls failed): the outage did not cut it off", lc.Failed, lc.Requests)
		}
		parts = append(parts, p)
	}
	if len(parts) == 0 {
		return ""
	}
	return "; " + strings.Join(parts, "; ")
}

// LateConsumerSummary is a LateConsumer in the JSON output.
type LateConsumerSummary struct {
	// Snapshot is true for the consumer configured with a last-good
	// snapshot file.
	Snapshot bool `json:"with_snapshot"`
	// StartedSeconds is when it started, from the run's start.
	StartedSeconds float64 `json:"started_s"`
	// Served is the snapshot file it served ("" for none), and
	// SnapshotAgeSeconds that view's age at its first call (null without).
	Served             string   `json:"served_snapshot,omitempty"`
	SnapshotAgeSeconds *float64 `json:"snapshot_age_s"`
	Requests           int      `json:"requests"`
	Failed             int      `json:"failed"`
	// Error is the first failure's error.
	Error string `json:"error,omitempty"`
}

func summarizeLate(lcs []LateConsumer) []LateConsumerSummary {
	var out []LateConsumerSummary
	for _, lc := range lcs {
		ls := LateConsumerSummary{Snapshot: lc.Snapshot, StartedSeconds: secs(lc.Started), Served: lc.Served,
			Requests: lc.Requests, Failed: lc.Failed, Error: lc.Err}
		if lc.Served != "" {
			ls.SnapshotAgeSeconds = optSecs(lc.Age)
		}
		out = append(out, ls)
	}
	return out
}

// errNote renders a first failure's error as " (error)", "" for none.
func errNote(err string) string {
	if err == "" {
		return ""
	}
	return " (" + err + ")"
}
