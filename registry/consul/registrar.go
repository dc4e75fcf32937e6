package consul

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/drainkit/drainkit/internal/regworker"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/hashicorp/consul/api"
)

// metaManaged marks registrations made by drainkit, so that only those are
// ever removed as a dead predecessor's leftovers.
const metaManaged = "drainkit_managed"

// ErrClosed is returned by Sync after Close.
var ErrClosed = errors.New("consul: registrar closed")

// Registrar registers one instance in the local Consul agent and keeps its
// TTL check in line with the lifecycle. It implements registry.Registrar
// (lifecycle.Registrar and lifecycle.DeregistrationConfirmer). Create it with
// New and add it with Lifecycle.AddRegistrar; call Close when the process no
// longer needs it (a stop hook), which ends the heartbeat without
// deregistering.
//
// All agent calls that change the instance run in one goroutine, the worker,
// owned by the Registrar: started by the first READY Sync, ended by
// Deregister or Close. The worker is a state machine over what the agent
// holds of the instance (see agentState), stepped on each heartbeat and at
// once when Sync triggers it.
type Registrar struct {
	opts    Options
	id      string
	checkID string
	client  *api.Client
	owned   *http.Client // the HTTP client New created, or nil if the caller supplied one
	log     *slog.Logger

	// core holds the wanted state (its Reason is shown as the check's
	// output, its ReadyAt is registry.MetaReadyAt), the status and the
	// worker.
	core *regworker.Core

	// Owned by the worker; read by Deregister only after the worker returned.
	state               agentState
	published           time.Time // the READY time in the meta the agent last accepted
	predecessorsRemoved bool      // a one-shot task before the first successful registration
}

var _ registry.Registrar = (*Registrar)(nil)

// New validates opts and returns a Registrar. It makes no call to Consul:
// an unreachable agent at start only delays the registration, which the
// heartbeat retries. It returns a *budget.RangeError for an out-of-range
// option, or an error from api.NewClient for a bad Consul configuration.
func New(opts Options) (*Registrar, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	var cfg api.Config
	if opts.Consul != nil {
		cfg = *opts.Consul
	} else {
		cfg = *api.DefaultConfig()
	}
	supplied := cfg.HttpClient != nil
	client, err := api.NewClient(&cfg)
	if err != nil {
		return nil, fmt.Errorf("consul: client configuration: %w", err)
	}
	if opts.ID == "" {
		opts.ID = registry.InstanceID(opts.Service, opts.Port)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	r := &Registrar{
		opts:    opts,
		id:      opts.ID,
		checkID: "service:" + opts.ID,
		client:  client,
		log:     logger.With("registrar", "consul", "service", opts.Service, "id", opts.ID),
	}
	r.core = regworker.NewCore(registry.Status{ID: opts.ID, Service: opts.Service, Health: registry.Absent},
		regworker.Streak{Log: r.log, Failing: "consul: agent call failed; retrying on each heartbeat",
			Again: "consul: agent call failed", Recovered: "consul: agent calls succeed again"}, ErrClosed)
	if !supplied {
		r.owned = cfg.HttpClient
	}
	return r, nil
}

// ID returns the instance ID registered in Consul.
func (r *Registrar) ID() string { return r.id }

// CheckID returns the ID of the instance's TTL check ("service:" + ID).
func (r *Registrar) CheckID() string { return r.checkID }

// Options returns the options in force, with defaults applied.
func (r *Registrar) Options() Options { return r.opts }

// Status returns what the Registrar last wrote to Consul. It never blocks on
// the agent.
func (r *Registrar) Status() registry.Status { return r.core.Status() }

// Sync brings Consul in line with t: the first READY registers the service
// and its passing TTL check in one call; later transitions set the check
// passing (READY) or critical (EJECTED by the readiness checks), or turn
// maintenance mode on (EJECTED by an operator) or off. EJECTED before the
// first READY changes nothing, since nothing is registered yet. Every READY
// publishes its time (t.At, or the time of the call if zero) under
// registry.MetaReadyAt: READY again after EJECTED re-registers the service
// with the new time before it passes again.
//
// It returns once the worker applied t (or a later transition) with that
// outcome, or ctx's error if ctx ends first; the worker keeps retrying on
// each heartbeat either way. It returns ErrClosed after Close,
// registry.ErrDeregistered after Deregister, and an error for states other
// than READY and EJECTED.
func (r *Registrar) Sync(ctx context.Context, t lifecycle.Transition) error {
	return r.core.Sync(ctx, t, r.opts.HeartbeatInterval, r.step)
}

// Close stops the heartbeat and waits for its goroutine, then closes idle
// connections of the HTTP client New created. It does not deregister: the
// check turns critical after TTL and Consul removes the instance after
// DeregisterCriticalServiceAfter. Close is idempotent and returns nil.
func (r *Registrar) Close() error {
	r.core.Close(context.Background())
	if r.owned != nil {
		r.owned.CloseIdleConnections()
	}
	return nil
}

// callCtx bounds one agent call by CallTimeout.
func (r *Registrar) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.opts.CallTimeout)
}

// StatusDetail returns Status for GET /state (lifecycle.StatusDetailer).
func (r *Registrar) StatusDetail() any { return r.Status() }
