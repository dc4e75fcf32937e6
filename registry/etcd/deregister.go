package etcd

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/drainkit/drainkit/internal/regworker"
	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/registry"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Deregister stops the keep-alives (so the instance is never registered
// again), then revokes the lease, which deletes the key with it in etcd's
// one step, retrying failed calls with jittered backoff (50ms doubling to
// 1s, the last attempt just before ctx's deadline) until ctx is done. Each
// attempt is bounded by CallTimeout and by ctx. It returns nil once etcd
// revoked the lease or no longer knew it, and when no lease was ever held;
// otherwise an error naming the attempts and the last failure, at ctx's
// deadline at the latest: the key then leaves when the lease expires, TTL
// after the last keep-alive. Later calls return nil at once.
func (r *Registrar) Deregister(ctx context.Context) error {
	start := time.Now()
	first, stopped := r.core.BeginDeregister(ctx)
	if !first {
		return nil
	}
	if !stopped {
		err := fmt.Errorf("etcd: deregister %s: worker still running at the deadline: %w", r.id, ctx.Err())
		r.core.Failed("revoke lease", err)
		return err
	}
	r.mu.Lock()
	c := r.client
	r.mu.Unlock()
	if r.held == 0 || c == nil {
		// No lease, no key of ours: a key lives only under its lease, and a
		// lease etcd lost took its key with it. (No client: nothing was ever
		// called, unless Close came first, which the lifecycle never does.)
		r.mu.Lock()
		r.noneHeld = true
		r.mu.Unlock()
		r.log.Info("etcd: nothing to deregister: no lease held")
		return nil
	}
	attempts, err := r.revokeRetrying(ctx, c)
	if err != nil {
		err = fmt.Errorf("etcd: deregister %s: revoke lease %x: %d attempts in %s: %w", r.id, int64(r.held), attempts,
			time.Since(start).Round(time.Millisecond), err)
		r.core.Failed("revoke lease", err)
		r.log.Warn("etcd: deregistration failed; the key leaves when the lease expires", "error", err, "ttl_ms", r.opts.TTL.Milliseconds())
		return err
	}
	r.core.Wrote(func(s *registry.Status) { s.Health = registry.Absent })
	r.log.Info("etcd: deregistered: lease revoked", "lease", fmt.Sprintf("%x", int64(r.held)), "attempts", attempts,
		"took_ms", time.Since(start).Milliseconds())
	return nil
}

// revokeRetrying revokes the lease until it succeeds or ctx ends. It returns
// the number of attempts and the last error joined with ctx's.
func (r *Registrar) revokeRetrying(ctx context.Context, c *clientv3.Client) (int, error) {
	return regworker.Retry(ctx, func() error {
		cctx, cancel := r.callCtx(ctx)
		_, err := c.Revoke(cctx, r.held)
		cancel()
		if lostLease(err) {
			return nil
		}
		return err
	})
}

// Confirm blocks until etcd no longer holds the instance's key (nil), or ctx
// is done (an error wrapping ctx.Err() and the last failure). It reads the
// key; if it is still there, it watches it from the read's revision + 1 until
// a deletion, so it returns as soon as the lease is revoked or expires. After
// a failed Deregister it still returns once the lease has expired. It
// returns nil at once, without a call to etcd, when Deregister found no lease
// held (nothing registered, or a lease etcd already lost with its key), so an
// etcd that was never reachable costs no confirmation.
func (r *Registrar) Confirm(ctx context.Context) error {
	start := time.Now()
	r.mu.Lock()
	c, none := r.client, r.noneHeld
	r.mu.Unlock()
	if c == nil || none {
		return nil
	}
	var last error
	bo := regworker.NewBackoff()
	for {
		rev, err := r.waitGone(ctx, c)
		if err == nil {
			r.log.Info("etcd: confirmed: the key is gone", "took_ms", time.Since(start).Milliseconds(), "revision", rev)
			return nil
		}
		if ctx.Err() != nil {
			if last != nil {
				return fmt.Errorf("etcd: confirm %s gone: %w (last error: %v)", r.key, ctx.Err(), last)
			}
			return fmt.Errorf("etcd: confirm %s gone: %w", r.key, ctx.Err())
		}
		last = err
		_ = syncx.Sleep(ctx, bo.Next()) // a done ctx is reported by the next round
	}
}

// waitGone reads the key and, if present, watches it for its deletion. It
// returns the revision at which the key was seen absent or deleted, or an
// error (a failed read, a watch that ended without a deletion).
func (r *Registrar) waitGone(ctx context.Context, c *clientv3.Client) (int64, error) {
	cctx, cancel := r.callCtx(ctx)
	resp, err := c.Get(cctx, r.key)
	cancel()
	if err != nil {
		return 0, err
	}
	if len(resp.Kvs) == 0 {
		return resp.Header.Revision, nil
	}
	wctx, wcancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
	defer wcancel()
	for wr := range c.Watch(wctx, r.key, clientv3.WithRev(resp.Header.Revision+1)) {
		if err := wr.Err(); err != nil {
			return 0, err
		}
		for _, ev := range wr.Events {
			if ev.Type == clientv3.EventTypeDelete {
				return ev.Kv.ModRevision, nil
			}
		}
	}
	return 0, errors.New("etcd: watch ended before the key was deleted")
}
