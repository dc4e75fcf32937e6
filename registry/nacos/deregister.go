package nacos

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/drainkit/drainkit/internal/regworker"
	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/registry"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"
)

// errRefused is a registry call the server answered with "not done".
var errRefused = errors.New("nacos: the server refused the call")

// Deregister stops the worker (so the instance is never registered again),
// then deregisters the ephemeral instance through the client's connection,
// which also drops it from the client's re-registration after a reconnect.
// It retries with jittered backoff (50ms doubling to 1s, a last attempt
// just before ctx's deadline), each attempt bounded by CallTimeout and ctx.
// It returns nil once the server accepted it, or when nothing was ever
// registered; otherwise an error at ctx's deadline at the latest: the
// instance then leaves when Close closes the connection, or when the
// server notices the process gone. Later calls return nil at once.
func (r *Registrar) Deregister(ctx context.Context) error {
	start := time.Now()
	first, stopped := r.core.BeginDeregister(ctx)
	if !first {
		return nil
	}
	if !stopped {
		err := fmt.Errorf("nacos: deregister: worker still running at the deadline: %w", ctx.Err())
		r.core.Failed("deregister instance", err)
		return err
	}
	c := r.madeClient()
	if !r.registered.Load() || c == nil {
		r.log.Info("nacos: nothing to deregister: never registered")
		return nil
	}
	param := vo.DeregisterInstanceParam{Ip: r.opts.Address, Port: uint64(r.opts.Port), Cluster: r.opts.Cluster,
		ServiceName: r.opts.Service, GroupName: r.opts.Group, Ephemeral: true}
	attempts, err := regworker.Retry(ctx, func() error {
		cctx, cancel := r.callCtx(ctx)
		defer cancel()
		return bounded(cctx, func() error {
			ok, err := c.DeregisterInstance(param)
			if err == nil && !ok {
				err = errRefused
			}
			return err
		})
	})
	if err != nil {
		err = fmt.Errorf("nacos: deregister %s: %d attempts in %s: %w", r.core.Status().ID, attempts,
			time.Since(start).Round(time.Millisecond), err)
		r.core.Failed("deregister instance", err)
		r.log.Warn("nacos: deregistration failed; the instance leaves when the client's connection closes", "error", err)
		return err
	}
	r.core.Wrote(func(s *registry.Status) { s.Health = registry.Absent })
	r.log.Info("nacos: deregistered", "attempts", attempts, "took_ms", time.Since(start).Milliseconds())
	return nil
}

// Confirm blocks until the server no longer lists the instance to
// consumers (nil), or ctx is done (an error wrapping ctx.Err() and the last
// failure). It reads the consumers' list (GET /v1/ns/instance/list, healthy
// instances) every 50ms. It returns nil at once when nothing was ever
// registered.
func (r *Registrar) Confirm(ctx context.Context) error {
	start := time.Now()
	if r.madeClient() == nil || !r.registered.Load() {
		return nil
	}
	var last error
	for {
		cctx, cancel := r.callCtx(ctx)
		l, err := r.api.consumerList(cctx, r.opts.Service, []string{r.opts.Cluster})
		cancel()
		if err == nil {
			if _, found := r.find(l.Hosts); !found {
				r.log.Info("nacos: confirmed: the server no longer lists the instance", "took_ms", time.Since(start).Milliseconds())
				return nil
			}
		} else {
			last = err
		}
		if serr := syncx.Sleep(ctx, 50*time.Millisecond); serr != nil {
			if last != nil {
				return fmt.Errorf("nacos: confirm %s gone: %w (last error: %v)", r.core.Status().ID, serr, last)
			}
			return fmt.Errorf("nacos: confirm %s gone: %w", r.core.Status().ID, serr)
		}
	}
}
