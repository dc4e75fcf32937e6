package consul

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/drainkit/drainkit/internal/regworker"
	"github.com/drainkit/drainkit/registry"
	"github.com/hashicorp/consul/api"
)

// Deregister stops the heartbeat (so the instance is never registered again),
// then removes the instance from the agent, retrying failed calls with
// jittered backoff (50ms doubling to 1s, the last attempt just before ctx's
// deadline) until ctx is done. Each attempt is
// bounded by CallTimeout and by ctx. It returns nil once the agent removed
// the instance or did not know it, and when nothing was ever registered;
// otherwise an error naming the attempts and the last failure, at ctx's
// deadline at the latest. Later calls return nil at once.
func (r *Registrar) Deregister(ctx context.Context) error {
	start := time.Now()
	first, stopped := r.core.BeginDeregister(ctx)
	if !first {
		return nil
	}
	if !stopped {
		err := fmt.Errorf("consul: deregister %s: heartbeat still running at the deadline: %w", r.id, ctx.Err())
		r.core.Failed("deregister", err)
		return err
	}
	if r.state == stateNew {
		r.log.Info("consul: nothing to deregister: never registered")
		return nil
	}
	attempts, err := r.deregisterRetrying(ctx)
	if err == nil && r.state == stateUncertain {
		// A registration or heartbeat cancelled in flight may still be
		// applied by the agent after our deregistration: look once more.
		cctx, cancel := r.callCtx(ctx)
		_, _, gerr := r.client.Agent().Service(r.id, (&api.QueryOptions{}).WithContext(cctx))
		cancel()
		if gerr == nil {
			var n int
			n, err = r.deregisterRetrying(ctx)
			attempts += n
		}
	}
	if err != nil {
		err = fmt.Errorf("consul: deregister %s: %d attempts in %s: %w", r.id, attempts, time.Since(start).Round(time.Millisecond), err)
		r.core.Failed("deregister", err)
		r.log.Warn("consul: deregistration failed; the check turns critical after the TTL", "error", err, "ttl_ms", r.opts.TTL.Milliseconds())
		return err
	}
	r.core.Wrote(func(s *registry.Status) { s.Health = registry.Absent })
	r.log.Info("consul: deregistered", "attempts", attempts, "took_ms", time.Since(start).Milliseconds())
	return nil
}

// deregisterRetrying calls the agent until it succeeds or ctx ends. It
// returns the number of attempts and the last error joined with ctx's.
func (r *Registrar) deregisterRetrying(ctx context.Context) (int, error) {
	return regworker.Retry(ctx, func() error {
		cctx, cancel := r.callCtx(ctx)
		err := r.client.Agent().ServiceDeregisterOpts(r.id, (&api.QueryOptions{}).WithContext(cctx))
		cancel()
		if lostInstance(err) {
			return nil
		}
		return err
	})
}

// confirmWait is the longest a single blocking query of Confirm waits.
const confirmWait = 10 * time.Second

// Confirm blocks until Consul's health endpoint no longer lists the instance
// as passing (nil), or ctx is done (an error wrapping ctx.Err() and the last
// query error). It uses the watch's blocking queries on
// /v1/health/service/<service>?passing (at most confirmWait each, 50ms to 1s
// backoff after a failure), so it returns as soon as the catalog changes.
// After a failed Deregister it still returns once the TTL check has expired.
func (r *Registrar) Confirm(ctx context.Context) error {
	start := time.Now()
	var last error
	p := &poller{client: r.client, service: r.opts.Service, wait: confirmWait, bo: regworker.NewBackoff()}
	err := p.run(ctx, func(a answer) bool {
		if a.err != nil {
			last = a.err
			return true
		}
		if a.replay { // an older answer, perhaps from before the registration
			return true
		}
		if slices.ContainsFunc(a.entries, func(e *api.ServiceEntry) bool { return e.Service != nil && e.Service.ID == r.id }) {
			return true
		}
		r.log.Info("consul: confirmed: no longer passing", "took_ms", time.Since(start).Milliseconds(), "index", a.index)
		return false
	})
	switch {
	case err == nil:
		return nil
	case last != nil:
		return fmt.Errorf("consul: confirm %s not passing: %w (last error: %v)", r.id, err, last)
	}
	return fmt.Errorf("consul: confirm %s not passing: %w", r.id, err)
}
