package lifecycle

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/lifecycle/budget"
)

type registrarState struct {
	name      string
	r         Registrar
	synced    bool         // Sync was called at least once; guarded by Lifecycle.mu
	syncStart time.Time    // start of the Sync running now, zero if none; guarded by Lifecycle.mu
	info      RegistryInfo // guarded by Lifecycle.mu
}

func (l *Lifecycle) recordRegistry(rs *registrarState, op string, st State, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	rs.info = RegistryInfo{Name: rs.name, LastOp: op, LastState: st, At: time.Now()}
	if op == "sync" {
		rs.syncStart = time.Time{}
	}
	if err != nil {
		rs.info.Err = err.Error()
	}
}

// beginSync marks rs as synced before its Sync is called, so that a Sync
// still running when the drain starts is deregistered all the same (it may
// have written the instance already). It reports false once the drain has
// taken the registrars (takeSynced): then Sync must not be called at all.
// Under l.mu, so every Sync either is seen by takeSynced or never begins.
func (l *Lifecycle) beginSync(rs *registrarState) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.syncClosed {
		return false
	}
	rs.synced, rs.syncStart = true, time.Now()
	return true
}

// syncRegistrar feeds the latest READY/EJECTED transition to rs until ctx is
// done (the drain's start). One Sync at a time; latest wins.
func (l *Lifecycle) syncRegistrar(ctx context.Context, rs *registrarState) {
	sub, unsubscribe := l.Subscribe()
	defer unsubscribe()
	for {
		select {
		case <-ctx.Done():
			return
		case t := <-sub:
			if t.To != Ready && t.To != Ejected {
				continue
			}
			if !l.beginSync(rs) {
				return
			}
			err := rs.r.Sync(ctx, t)
			if ctx.Err() != nil && err != nil {
				err = errors.Join(err, ctx.Err())
			}
			l.recordRegistry(rs, "sync", t.To, err)
			if err != nil {
				l.opts.Logger.Warn("drainkit: registry sync failed", "registrar", rs.name, "state", t.To.String(), "error", err)
			}
		}
	}
}

// stopSync, at t0, ends the registry sync: no Sync begins after it, a
// running one has its context cancelled and is waited for up to budget.SyncGrace
// (a Sync that ignores its context may hold up deregistration briefly,
// never for long; it is then abandoned, and logged). It returns the
// registrars whose Sync was ever called: the ones that may be registered,
// so the only ones to deregister and confirm, whether or not their Sync
// returned.
func (l *Lifecycle) stopSync(r *run) []*registrarState {
	l.mu.Lock()
	l.syncClosed = true
	l.mu.Unlock()
	if r.cancelSync != nil {
		r.cancelSync()
		syncx.WaitFor(&r.syncing, budget.SyncGrace)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var synced []*registrarState
	for _, rs := range r.registrars {
		if !rs.synced {
			continue
		}
		synced = append(synced, rs)
		if !rs.syncStart.IsZero() {
			l.opts.Logger.Warn("drainkit: participant call abandoned: it ignored the end of its context",
				"participant", rs.name, "call", "Sync", "waited_ms", time.Since(rs.syncStart).Milliseconds(),
				"cause", context.Canceled.Error())
		}
	}
	return synced
}

// deregisterAll calls Deregister on every registrar of todo, concurrently,
// each bounded by deadline (callBounded). It returns the joined errors.
func (l *Lifecycle) deregisterAll(grace context.Context, todo []*registrarState, deadline time.Time) error {
	ctx, cancel := context.WithDeadline(grace, deadline)
	defer cancel()
	errs := make([]error, len(todo))
	var each sync.WaitGroup
	for i, rs := range todo {
		each.Go(func() {
			err := l.callBounded(ctx, rs.name, "Deregister", rs.r.Deregister)
			l.recordRegistry(rs, "deregister", Draining, err)
			if err != nil {
				msg := err.Error()
				if !strings.HasPrefix(msg, rs.name+":") {
					msg = rs.name + ": " + msg
				}
				errs[i] = errors.New(msg)
			}
		})
	}
	each.Wait() // each call is bounded
	return errors.Join(errs...)
}
