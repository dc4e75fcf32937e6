package lifecycle

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
)

type registrarState struct {
	name   string
	r      Registrar
	synced bool         // Sync was called at least once; guarded by Lifecycle.mu
	info   RegistryInfo // guarded by Lifecycle.mu
}

func (l *Lifecycle) recordRegistry(rs *registrarState, op string, st State, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	rs.info = RegistryInfo{Name: rs.name, LastOp: op, LastState: st, At: time.Now()}
	if op == "sync" {
		rs.synced = true
	}
	if err != nil {
		rs.info.Err = err.Error()
	}
}

// syncRegistrar feeds the latest READY/EJECTED transition to rs until ctx is
// done (the drain's start). One Sync at a time; latest wins.
func (l *Lifecycle) syncRegistrar(ctx context.Context, rs *registrarState) {
	sub := l.Subscribe()
	defer sub.Close()
	for {
		select {
		case <-ctx.Done():
			return
		case t := <-sub.C:
			if t.To != Ready && t.To != Ejected {
				continue
			}
			err := rs.r.Sync(ctx, t)
			if ctx.Err() != nil && err != nil {
				err = errors.Join(err, ctx.Err())
			}
			l.recordRegistry(rs, "sync", t.To, err)
			if err != nil {
				l.opts.logger.Warn("drainkit: registry sync failed", "registrar", rs.name, "state", t.To.String(), "error", err)
			}
		}
	}
}

// syncedRegistrars returns the registrars whose Sync was called: the ones
// that may be registered, so the only ones to deregister and confirm.
func (l *Lifecycle) syncedRegistrars() []*registrarState {
	l.mu.Lock()
	defer l.mu.Unlock()
	var synced []*registrarState
	for _, rs := range l.registrars {
		if rs.synced {
			synced = append(synced, rs)
		}
	}
	return synced
}

// deregisterAll calls Deregister on every registrar of todo, concurrently,
// bounded by deadline. It returns the joined errors.
func (l *Lifecycle) deregisterAll(todo []*registrarState, deadline time.Time) error {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	errs := make([]error, len(todo))
	var each sync.WaitGroup
	for i, rs := range todo {
		each.Go(func() {
			err := rs.r.Deregister(ctx)
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
	each.Wait()
	return errors.Join(errs...)
}

// confirmers returns the synced registrars that can confirm their
// deregistration.
func (l *Lifecycle) confirmers() []DeregistrationConfirmer {
	var cs []DeregistrationConfirmer
	for _, rs := range l.syncedRegistrars() {
		if c, ok := rs.r.(DeregistrationConfirmer); ok {
			cs = append(cs, c)
		}
	}
	return cs
}
