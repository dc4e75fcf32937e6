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
	// Step: converge (publish a changed READY time, heartbeat the TTL
	// check, maintenance on if wanted).
	stateRegistered
	// stateMaintenance: the agent holds the instance in maintenance mode.
	// Step: converge (publish a changed READY time, maintenance off if
	// wanted).
	stateMaintenance
	// stateUncertain: a write was cancelled in flight (Deregister or Close
	// stopped the worker): the agent may still apply it. Terminal; Deregister
	// looks once more after deregistering.
	stateUncertain
)

// step applies the latest wanted health once; its outcome goes to Sync
// callers.
func (r *Registrar) step(ctx context.Context) regworker.Outcome {
	cw := r.core.Wanted()
	return regworker.Outcome{Gen: cw.Gen, Err: r.apply(ctx, wanted{health: cw.Health, reason: cw.Reason, readyAt: cw.ReadyAt})}
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

// wanted is what one step applies: the latest Sync's health and reason, and
// the latest READY time.
type wanted struct {
	health  registry.Health
	reason  string
	readyAt time.Time
}

// apply registers the instance if the agent does not hold it, then sets
// maintenance mode and the TTL check as w says. If the agent turns out to
// have lost the instance, it registers again at once (once per step).
func (r *Registrar) apply(ctx context.Context, w wanted) error {
	regStatus, lost := "", false // regStatus: the check status just registered, if any
	for {
		var err error
		switch r.state {
		case stateNew, stateAbsent:
			if !r.predecessorsRemoved {
				r.removePredecessors(ctx)
			}
			if regStatus, err = r.register(ctx, w); err != nil {
				return err
			}
			continue // now stateRegistered
		case stateRegistered, stateMaintenance:
			err = r.converge(ctx, w, regStatus)
		case stateUncertain:
			return ctx.Err() // only after the worker was stopped
		}
		if err == nil || !lostInstance(err) {
			return err
		}
		if lost {
			r.core.Failed("heartbeat", err)
			return err
		}
		lost = true
		r.lose(err)
	}
}

// lose records that the agent no longer holds the instance.
func (r *Registrar) lose(err error) {
	r.state = stateAbsent
	r.core.Update(func(s *registry.Status) { s.Health = registry.Absent })
	r.log.Warn("consul: the agent lost the instance (agent restart or reaped); registering again", "error", err)
}

// interrupted moves to stateUncertain if err came from the worker being
// stopped in the middle of a write.
func (r *Registrar) interrupted(ctx context.Context) {
	if ctx.Err() != nil {
		r.state = stateUncertain
	}
}

// registration is the service with its TTL check, the check's initial
// status and the READY time in the meta. The agent uses status only for a
// check it does not hold: re-registering keeps an existing check's status.
func (r *Registrar) registration(status string, readyAt time.Time) *api.AgentServiceRegistration {
	meta := maps.Clone(r.opts.Meta)
	if meta == nil {
		meta = map[string]string{}
	}
	meta[metaManaged] = "true"
	meta[registry.MetaReadyAt] = readyAt.UTC().Format(time.RFC3339Nano)
	return &api.AgentServiceRegistration{
		ID:              r.id,
		Name:            r.opts.Service,
		Address:         r.opts.Address,
		Port:            r.opts.Port,
		TaggedAddresses: taggedAddresses(r.opts.endpoints()),
		Tags:            r.opts.Tags,
		Meta:            meta,
		Check: &api.AgentServiceCheck{
			CheckID:                        r.checkID,
			Name:                           "drainkit lifecycle TTL",
			Notes:                          "passing while the instance is READY; heartbeated by drainkit",
			TTL:                            r.opts.TTL.String(),
			Status:                         status,
			DeregisterCriticalServiceAfter: r.opts.DeregisterCriticalServiceAfter.String(),
		},
	}
}

// register sends the service and its TTL check in one call. The check starts
// passing only if w.health is Passing; in maintenance it starts critical and
// is set passing once maintenance mode is on. It returns the check's status.
func (r *Registrar) register(ctx context.Context, w wanted) (string, error) {
	status := api.HealthCritical
	if w.health == registry.Passing {
		status = api.HealthPassing
	}
	cctx, cancel := r.callCtx(ctx)
	defer cancel()
	r.state = stateAbsent // sent: the agent may hold it from here on
	err := r.client.Agent().ServiceRegisterOpts(r.registration(status, w.readyAt),
		api.ServiceRegisterOpts{ReplaceExistingChecks: true}.WithContext(cctx))
	if err != nil {
		r.interrupted(ctx)
		r.core.Failed("register", err)
		return "", err
	}
	r.state = stateRegistered // a new registration has maintenance mode off
	r.published = w.readyAt
	var n int
	r.core.Wrote(func(s *registry.Status) {
		s.Registrations++
		n = s.Registrations
		if status == api.HealthPassing {
			s.Health = registry.Passing
		} else {
			s.Health = registry.Critical
		}
	})
	if n == 1 {
		r.log.Info("consul: registered", "check_status", status, "ttl_ms", r.opts.TTL.Milliseconds())
	} else {
		r.log.Info("consul: registered again", "check_status", status, "registrations", n)
	}
	return status, nil
}

// converge sets maintenance mode and the TTL check (the heartbeat). It orders
// the calls so that the instance never passes in between: maintenance on
// before the check passes, and the check critical before maintenance goes
// off; and it passes again after EJECTED only once the meta carries the new
// READY time. regStatus is the check status just registered ("" if none),
// which saves one call.
func (r *Registrar) converge(ctx context.Context, w wanted, regStatus string) error {
	want, reason := w.health, w.reason
	wantMaint := want == registry.Maintenance
	status := ttlStatus(want)
	if want == registry.Passing && !r.published.Equal(w.readyAt) {
		if err := r.publish(ctx, w.readyAt); err != nil {
			return err
		}
	}
	// The order of the four calls below is what keeps the instance from
	// passing in between (see above).
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
	r.core.Wrote(func(s *registry.Status) { s.Health = want })
	return nil
}

// publish re-registers the instance under its ID with readyAt in the meta
// (registry.MetaReadyAt: the latest READY). Without ReplaceExistingChecks the
// agent keeps both the TTL check's status and the maintenance check, so the
// instance stays out of rotation until converge's next calls. Should the
// agent have lost the instance meanwhile, this registers it afresh with a
// critical check (not counted in Status.Registrations).
func (r *Registrar) publish(ctx context.Context, readyAt time.Time) error {
	reg := r.registration(api.HealthCritical, readyAt)
	if err := r.call(ctx, "publish READY time", func(q *api.QueryOptions) error {
		return r.client.Agent().ServiceRegisterOpts(reg, api.ServiceRegisterOpts{}.WithContext(q.Context()))
	}); err != nil {
		return err
	}
	r.published = readyAt
	r.log.Info("consul: READY again; published the new READY time", "ready_at", readyAt.UTC().Format(time.RFC3339Nano))
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
			r.core.Failed(op, err)
		}
		return err
	}
	r.core.Wrote(nil)
	return nil
}

// taggedAddresses encodes the endpoints as kratos's Consul registry does: one
// tagged address per scheme, keyed by the scheme, whose address is the
// endpoint's URL. nil for no endpoints.
func taggedAddresses(eps []registry.Endpoint) map[string]api.ServiceAddress {
	if len(eps) == 0 {
		return nil
	}
	m := make(map[string]api.ServiceAddress, len(eps))
	for _, e := range eps {
		m[e.Scheme] = api.ServiceAddress{Address: e.String(), Port: e.Port}
	}
	return m
}
