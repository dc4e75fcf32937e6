package nacos

import (
	"context"
	"errors"
	"time"

	"github.com/drainkit/drainkit/internal/regworker"
	"github.com/drainkit/drainkit/registry"
	"github.com/nacos-group/nacos-sdk-go/v2/vo"
)

// step applies the latest wanted health once; its outcome goes to Sync
// callers.
func (r *Registrar) step(ctx context.Context) regworker.Outcome {
	w := r.core.Wanted()
	return regworker.Outcome{Gen: w.Gen, Err: r.apply(ctx, w.Health, w.ReadyAt)}
}

// apply reads the instance back from the server, notices an operator's
// offline (or its end), and registers the instance again when the server
// lacks it or shows something else than wanted.
func (r *Registrar) apply(ctx context.Context, want registry.Health, readyAt time.Time) error {
	c, err := r.sdkClient(ctx)
	if err != nil {
		r.core.Failed("client", err)
		return err
	}
	cctx, cancel := r.callCtx(ctx)
	hosts, disabledVisible, denied, err := r.api.adminList(cctx, r.opts.Service)
	cancel()
	r.noticeAdminAPI(denied)
	if err != nil {
		r.core.Failed("read instance", err)
		return err
	}
	me, found := r.find(hosts)
	settled := time.Since(r.pubAt) >= r.opts.SettleTime
	if found && settled {
		r.noticeOperator(me, disabledVisible)
	}
	r.mu.Lock()
	offline := r.offline
	r.mu.Unlock()
	next := publication{healthy: want == registry.Passing, enabled: !offline, readyAt: readyAt}
	switch {
	case !found && !r.pubAt.IsZero() && !settled && next == r.pub:
		return nil // just registered: the server's lists catch up within milliseconds
	case !found:
	case next != r.pub:
	case settled && me.Healthy != next.healthy:
	default:
		r.core.Wrote(func(s *registry.Status) { s.Health = healthOf(want, offline) })
		return nil
	}
	return r.register(ctx, c, next, !found, want)
}

// noticeAdminAPI logs once when the admin API denies the read-back (denied
// not nil), and once when it answers again: without it, an operator's
// offline cannot be observed, while registration goes on through the
// client API and the consumers' list.
func (r *Registrar) noticeAdminAPI(denied error) {
	if (denied != nil) == r.adminDenied {
		return
	}
	r.adminDenied = denied != nil
	if denied == nil {
		r.log.Info("nacos: the admin API answers the read-back again; an operator's offline is observed again")
		return
	}
	var de *deniedError
	status := ""
	if errors.As(denied, &de) {
		status = de.status
	}
	attrs := []any{"status", status, "error", denied.Error()}
	if lerr := r.api.deniedLogin(); lerr != nil {
		attrs = append(attrs, "login", lerr.Error())
	}
	why := "an operator's offline (the console's enabled=false) cannot be observed: the client API lists no disabled instance, so it looks like absence"
	if r.opts.Username == "" {
		why += "; give registry.nacos.username and registry.nacos.password of a Nacos admin user to observe it"
	} else {
		why += "; registry.nacos.username must name a Nacos admin user (with a correct password) to observe it"
	}
	r.log.Warn("nacos: the admin API denied the read-back of the instance ("+status+"); registration goes on through the client API, but "+why, attrs...)
}

// noticeOperator compares the server's enabled flag with what the Registrar
// published. Nacos keeps an operator's change (the console's offline, the
// admin API) as instance metadata laid over the client's registration, so
// "disabled although published enabled" is the operator's doing, and
// "enabled although published disabled" is the operator ending it.
func (r *Registrar) noticeOperator(me host, disabledVisible bool) {
	if !disabledVisible {
		return
	}
	r.mu.Lock()
	was := r.offline
	switch {
	case !me.Enabled && r.pub.enabled && !was:
		r.offline = true
	case me.Enabled && !r.pub.enabled && was:
		r.offline = false
	}
	now, cb := r.offline, r.opts.OnOperator
	r.mu.Unlock()
	if now && !was {
		r.core.Update(func(s *registry.Status) {
			if s.Health != registry.Absent {
				s.Health = registry.Maintenance // before the hook: its eject finds it so
			}
		})
	}
	if now == was {
		return
	}
	if now {
		r.log.Warn("nacos: an operator disabled the instance on the server (offline); it stays out of rotation, and re-registrations keep it disabled until an operator enables it")
	} else {
		r.log.Info("nacos: an operator enabled the instance again")
	}
	if cb != nil {
		cb(now)
	}
}

// register (re-)registers the ephemeral instance with p; absent says the
// server lacked it (a registration, counted in Status) rather than showing
// it otherwise (an update).
func (r *Registrar) register(ctx context.Context, c interface {
	RegisterInstance(vo.RegisterInstanceParam) (bool, error)
}, p publication, absent bool, want registry.Health) error {
	param := vo.RegisterInstanceParam{Ip: r.opts.Address, Port: uint64(r.opts.Port), Weight: r.opts.Weight,
		Enable: p.enabled, Healthy: p.healthy, Metadata: r.metadata(p.readyAt), ClusterName: r.opts.Cluster,
		ServiceName: r.opts.Service, GroupName: r.opts.Group, Ephemeral: true}
	cctx, cancel := r.callCtx(ctx)
	defer cancel()
	r.registered.Store(true)
	err := bounded(cctx, func() error {
		ok, err := c.RegisterInstance(param)
		if err == nil && !ok {
			err = errRefused
		}
		return err
	})
	if err != nil {
		r.core.Failed("register instance", err)
		return err
	}
	r.pub, r.pubAt = p, time.Now()
	var n int
	r.core.Wrote(func(s *registry.Status) { // one update: Status never shows the count without the health
		if absent {
			s.Registrations++
		}
		n, s.Health = s.Registrations, healthOf(want, !p.enabled)
	})
	if absent {
		r.log.Info("nacos: registered", "ip", r.opts.Address, "port", r.opts.Port, "cluster", r.opts.Cluster,
			"healthy", p.healthy, "enabled", p.enabled, "weight", r.opts.Weight, "registrations", n)
	} else {
		r.log.Info("nacos: instance updated", "healthy", p.healthy, "enabled", p.enabled)
	}
	return nil
}

// find returns this instance among hosts.
func (r *Registrar) find(hosts []host) (host, bool) {
	for _, h := range hosts {
		if h.IP == r.opts.Address && h.Port == r.opts.Port && (h.ClusterName == "" || h.ClusterName == r.opts.Cluster) {
			return h, true
		}
	}
	return host{}, false
}

// healthOf is the Status health: Maintenance while an operator keeps the
// instance offline.
func healthOf(want registry.Health, offline bool) registry.Health {
	if offline && want != registry.Absent {
		return registry.Maintenance
	}
	return want
}
