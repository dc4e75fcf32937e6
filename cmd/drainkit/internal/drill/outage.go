package drill

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
)

// outageProxy stands between a run's replicas and consumers and the
// registry (ScenarioRegistryOutage): a connBalancer whose one backend is
// the registry until cut, when every open connection is reset and so is
// every new one until restored. To its clients that is the registry gone:
// watches break, heartbeats and lease keep-alives fail, new connections
// are refused at once.
type outageProxy struct {
	*connBalancer
	down atomic.Bool
}

// newOutageProxy listens on a free loopback port and forwards to target
// (host:port). Its Addr is given to replicas and consumers in place of the
// registry's.
func newOutageProxy(target string) (*outageProxy, error) {
	p := &outageProxy{}
	b, err := newConnBalancer(func() []string {
		if p.down.Load() {
			return nil
		}
		return []string{target}
	})
	if err != nil {
		return nil, err
	}
	p.connBalancer = b
	return p, nil
}

// cut starts the outage: every open connection is reset, and so is every
// new one until restore.
func (p *outageProxy) cut() {
	p.down.Store(true)
	p.resetAll()
}

// restore ends the outage.
func (p *outageProxy) restore() { p.down.Store(false) }

// close stops the proxy and waits for its connections to end.
func (p *outageProxy) close() { p.Close() }

// resetConn closes c with a TCP reset, as a registry host that went away
// does, rather than an orderly close its clients could take for an answer.
func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// registryOutage is ScenarioRegistryOutage: a consumer watching the
// registry writes its last-good snapshot, then the registry is cut off for
// Config.Outage under load while two consumers start (with that snapshot
// and without one, LateConsumer), then it is restored and one replica
// replaced, so that a change after the return shows whether the consumers
// picked it up.
func (s *strategyRun) registryOutage(ctx context.Context, disc Discovery, initial []*Replica) error {
	if s.proxy == nil {
		return errors.New("registry-outage: no registry proxy (give --etcd or --consul)")
	}
	dir, err := os.MkdirTemp("", "drainkit-drill-snapshot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	snapshot := filepath.Join(dir, "last-good.json")
	if err := s.writeSnapshot(ctx, snapshot); err != nil {
		return err
	}
	s.st.set("registry outage (%s)", s.cfg.Outage)
	s.outageAt = time.Now()
	s.proxy.cut()
	late := make(chan []LateConsumer, 1)
	go func() { late <- s.lateConsumers(ctx, snapshot) }()
	err = syncx.Sleep(ctx, s.cfg.Outage)
	lcs := <-late // all ended within the outage
	s.mu.Lock()
	s.late = lcs
	s.mu.Unlock()
	s.proxy.restore()
	s.outageEnd = time.Now()
	if err != nil {
		return err
	}
	// Give the clients' reconnects a moment, as an operator would before
	// the next rollout, then change something.
	if err := syncx.Sleep(ctx, s.cfg.Outage); err != nil {
		return err
	}
	return s.rolling(ctx, disc, initial[:1])
}

// hadOutage reports whether the run had a registry outage (a zero
// StrategyRun has none).
func (r StrategyRun) hadOutage() bool { return r.OutageEnd > r.OutageStart }

// outageVerdict is a registry-outage run's verdict: body (the verdict on
// the load's requests) and outageNote, headed by a FAIL when the consumers
// started during the outage did not behave as configured (lateConsumersOK).
func outageVerdict(body string, run StrategyRun) string {
	if !lateConsumersOK(run.LateConsumers) {
		body = "FAIL: the consumers started during the outage did not behave as configured; the load: " + body
	}
	return body + outageNote(run)
}

// outageNote says when the registry was unreachable and how the change
// after its return was seen.
func outageNote(run StrategyRun) string {
	if !run.hadOutage() {
		return ""
	}
	return fmt.Sprintf("; the registry was unreachable from %.2fs to %.2fs and the replacement after its return is in the events",
		secs(run.OutageStart), secs(run.OutageEnd)) + lateConsumersNote(run.LateConsumers)
}
