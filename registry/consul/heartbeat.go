package consul

import (
	"context"

	"github.com/drainkit/drainkit/internal/regworker"
	"maps"
	"time"

	"github.com/drainkit/drainkit/registry"
	"github.com/hashicorp/consul/api"
)

// agentState is what the agent holds of this instance, as far as the worker
// knows; the worker's step is one switch over it.
type agentState int

const (
	// stateNew: nothing was ever sent. Step: remove predecessors, register.
	stateNew agentState = iota
	// stateAbsent: a registration was sent, but the agent does not hold the
	// instance (the call failed, or the agent lost or reaped it). Step:
	// register again.
	stateAbsent
	// stateRegistered: the agent holds the instance, maintenance mode off.
	// Step: converge (heartbeat the TTL check, maintenance on if wanted).
	stateRegistered
	// stateMaintenance: the agent holds the instance in maintenance mode.
	// Step: converge.
	stateMaintenance
	// stateUncertain: a write was cancelled in flight (Deregister or Close
	// stopped the worker): the agent may still apply it. Terminal; Deregister
	// looks once more after deregistering.
	stateUncertain
)

// step applies the latest wanted health once; its outcome goes to Sync
// callers. (registry/etcd's step has the same shape over its own fields.)
func (r *Registrar) step(ctx context.Context) regworker.Outcome {
	r.mu.Lock()
	gen, want, reason := r.gen, r.want, r.reason
	r.mu.Unlock()
	return regworker.Outcome{Gen: gen, Err: r.apply(ctx, want, reason)}
}

// ttlStatus is the TTL check's status for a wanted health. In maintenance the
// check stays passing: maintenance mode alone takes the instance out of
// rotation, and a passing check is never reaped by
// DeregisterCriticalServiceAfter, however long the operator keeps it out.
func ttlStatus(h registry.Health) string {
	if h == registry.Critical {
		return api.HealthCritical
	}
	return api.HealthPassing
}

// apply registers the instance if the agent does not hold it, then sets
// maintenance mode and the TTL check as want says. If the agent turns out to
// have lost the instance, it registers again at once (once per step).
func (r *Registrar) apply(ctx context.Context, want registry.Health, reason string) error {
	regStatus, lost := "", false // regStatus: the check status just registered, if any
	for {
		var err error
		switch r.state {
		case stateNew, stateAbsent:
			if !r.predecessorsRemoved {
				r.removePredecessors(ctx)
			}
			if regStatus, err = r.register(ctx, want, reason); err != nil {
				return err
			}
			continue // now stateRegistered
		case stateRegistered, stateMaintenance:
			err = r.converge(ctx, want, reason, regStatus)
		case stateUncertain:
			return ctx.Err() // only after the worker was stopped
		}
		if err == nil || !lostInstance(err) {
			return err
		}
		if lost {
			r.failed("heartbeat", err)
			return err
		}
		lost = true
		r.lose(err)
	}
}

// lose records that the agent no longer holds the instance.
func (r *Registrar) lose(err error) {
	r.state = stateAbsent
	r.mu.Lock()
	r.status.Health = registry.Absent
	r.mu.Unlock()
	r.log.Warn("consul: the agent lost the instance (agent restart or reaped); registering again", "error", err)
}

// interrupted moves to stateUncertain if err came from the worker being
// stopped in the middle of a write.
func (r *Registrar) interrupted(ctx context.Context) {
	if ctx.Err() != nil {
		r.state = stateUncertain
	}
}

// register sends the service and its TTL check in one call. The check starts
// passing only if want is Passing; in maintenance it starts critical and is
// set passing once maintenance mode is on. It returns the check's status.
func (r *Registrar) register(ctx context.Context, want registry.Health, reason string) (string, error) {
	status := api.HealthCritical
	if want == registry.Passing {
		status = api.HealthPassing
	}
	meta := maps.Clone(r.opts.Meta)
	if meta == nil {
		meta = map[string]string{}
	}
	meta[metaManaged] = "true"
	meta[registry.MetaReadyAt] = r.readyAt.UTC().Format(time.RFC3339Nano)
	reg := &api.AgentServiceRegistration{
		ID:      r.id,
		Name:    r.opts.Service,
		Address: r.opts.Address,
		Port:    r.opts.Port,
		Tags:    r.opts.Tags,
		Meta:    meta,
		Check: &api.AgentServiceCheck{
			CheckID:                        r.checkID,
			Name:                           "drainkit lifecycle TTL",
			Notes:                          "passing while the instance is READY; heartbeated by drainkit",
			TTL:                            r.opts.TTL.String(),
			Status:                         status,
			DeregisterCriticalServiceAfter: r.opts.DeregisterCriticalServiceAfter.String(),
		},
	}
	cctx, cancel := r.callCtx(ctx)
	defer cancel()
	r.state = stateAbsent // sent: the agent may hold it from here on
	err := r.client.Agent().ServiceRegisterOpts(reg, api.ServiceRegisterOpts{ReplaceExistingChecks: true}.WithContext(cctx))
	if err != nil {
		r.interrupted(ctx)
		r.failed("register", err)
		return "", err
	}
	r.state = stateRegistered // a new registration has maintenance mode off
	var n int
	r.wrote(func(s *registry.Status) {
		s.Registrations++
		n = s.Registrations
		if status == api.HealthPassing {
			s.Health = registry.Passing
		} else {
			s.Health = registry.Critical
		}
	})
	if n == 1 {
		r.log.Info("consul: registered", "check_status", status, "ttl", r.opts.TTL)
	} else {
		r.log.Info("consul: registered again", "check_status", status, "registrations", n)
	}
	return status, nil
}

// converge sets maintenance mode and the TTL check (the heartbeat). It orders
// the calls so that the instance never passes in between: maintenance on
// before the check passes, and the check critical before maintenance goes
// off. regStatus is the check status just registered ("" if none), which
// saves one call.
func (r *Registrar) converge(ctx context.Context, want registry.Health, reason, regStatus string) error {
	wantMaint := want == registry.Maintenance
	status := ttlStatus(want)
	// The maintenance-on and maintenance-off blocks look alike; their order
	// around the TTL updates is the point, so they stay written out.
	if wantMaint && r.state == stateRegistered {
		if err := r.call(ctx, "maintenance on", func(q *api.QueryOptions) error {
			return r.client.Agent().EnableServiceMaintenanceOpts(r.id, reason, q)
		}); err != nil {
			return err
		}
		r.state = stateMaintenance
	}
	if status == api.HealthCritical && regStatus != status {
		if err := r.updateTTL(ctx, status, reason); err != nil {
			return err
		}
	}
	if !wantMaint && r.state == stateMaintenance {
		if err := r.call(ctx, "maintenance off", func(q *api.QueryOptions) error {
			return r.client.Agent().DisableServiceMaintenanceOpts(r.id, q)
		}); err != nil {
			return err
		}
		r.state = stateRegistered
	}
	if status == api.HealthPassing && regStatus != status {
		if err := r.updateTTL(ctx, status, reason); err != nil {
			return err
		}
	}
	r.wrote(func(s *registry.Status) { s.Health = want })
	return nil
}

func (r *Registrar) updateTTL(ctx context.Context, status, reason string) error {
	return r.call(ctx, "heartbeat", func(q *api.QueryOptions) error {
		return r.client.Agent().UpdateTTLOpts(r.checkID, reason, status, q)
	})
}

// call runs one agent write bounded by CallTimeout and records its outcome.
func (r *Registrar) call(ctx context.Context, op string, fn func(*api.QueryOptions) error) error {
	cctx, cancel := r.callCtx(ctx)
	defer cancel()
	err := fn((&api.QueryOptions{}).WithContext(cctx))
	if err != nil {
		r.interrupted(ctx)
		if !lostInstance(err) {
			r.failed(op, err)
		}
		return err
	}
	r.wrote(nil)
	return nil
}
