package drill

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
)

// outageProxy stands between a run's replicas and consumers and the
// registry (ScenarioRegistryOutage): a TCP proxy on 127.0.0.1 that
// forwards to the registry until cut, then resets every connection and
// every new one until restored. To its clients that is the registry gone:
// watches break, heartbeats and lease keep-alives fail, new connections
// are refused at once.
type outageProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

// newOutageProxy listens on a free loopback port and forwards to target
// (host:port).
func newOutageProxy(target string) (*outageProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &outageProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Go(p.accept)
	return p, nil
}

// Addr is the proxy's host:port, given to replicas and consumers in place
// of the registry's.
func (p *outageProxy) Addr() string { return p.ln.Addr().String() }

func (p *outageProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		p.mu.Lock()
		if p.down {
			p.mu.Unlock()
			resetConn(c)
			continue
		}
		p.conns[c] = struct{}{}
		p.mu.Unlock()
		p.wg.Go(func() { p.forward(c) })
	}
}

// forward copies both ways between c and a new connection to the target
// until either side ends or the proxy is cut.
func (p *outageProxy) forward(c net.Conn) {
	defer p.forget(c)
	up, err := net.DialTimeout("tcp", p.target, time.Second)
	if err != nil {
		resetConn(c)
		return
	}
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		resetConn(c)
		_ = up.Close()
		return
	}
	p.conns[up] = struct{}{}
	p.mu.Unlock()
	defer p.forget(up)
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go pipe(up, c)
	go pipe(c, up)
	<-done
	_ = c.Close()
	_ = up.Close()
	<-done
}

func (p *outageProxy) forget(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

// cut starts the outage: every open connection is reset, and so is every
// new one until restore.
func (p *outageProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		resetConn(c)
	}
}

// restore ends the outage.
func (p *outageProxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// close stops the proxy and waits for its connections to end.
func (p *outageProxy) close() {
	_ = p.ln.Close()
	p.cut()
	p.wg.Wait()
}

// resetConn closes c with a TCP reset, as a registry host that went away
// does, rather than an orderly close its clients could take for an answer.
func resetConn(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}

// registryOutage is ScenarioRegistryOutage: a consumer watching the
// registry writes its last-good snapshot (once its view lists the
// replicas), then the registry is cut off under load for Config.Outage,
// or longer until the two consumers started meanwhile (with that snapshot
// and without one, LateConsumer) have ended, then it is restored and one replica
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
	if err := s.writeSnapshot(ctx, snapshot, len(initial)); err != nil {
		return err
	}
	s.st.set("registry outage (%s)", s.cfg.Outage)
	s.outageAt = time.Now()
	s.proxy.cut()
	late := make(chan []LateConsumer, 1)
	go func() { late <- s.lateConsumers(ctx, snapshot) }()
	err = syncx.Sleep(ctx, s.cfg.Outage)
	lcs := <-late // the outage lasts until they end
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
