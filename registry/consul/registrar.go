package consul

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

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
// All agent calls that change the instance run in one goroutine, owned by
// the Registrar: started by the first READY Sync, ended by Deregister or
// Close.
type Registrar struct {
	opts    Options
	id      string
	checkID string
	client  *api.Client
	owned   *http.Client // the HTTP client New created, or nil if the caller supplied one
	log     *slog.Logger

	mu         sync.Mutex
	want       registry.Health // latest Sync's target
	reason     string          // latest Sync's reason, shown as the check's output
	everReady  bool
	gen        uint64        // bumped by each Sync
	applied    uint64        // last generation the worker applied
	appliedErr error         // its outcome
	appliedCh  chan struct{} // closed and replaced after each worker step
	status     registry.Status
	failing    bool // the last agent call failed (log once per failure streak)
	closed     bool
	cancel     context.CancelFunc // stops the worker; nil before it started
	done       chan struct{}      // closed when the worker returned
	kick       chan struct{}

	// Owned by the worker goroutine; read by Deregister only after the worker
	// has returned.
	attempted  bool // a registration was sent: the agent may hold the instance
	uncertain  bool // a write was cancelled in flight: the agent may still apply it
	registered bool // the agent holds the instance, as far as we know
	maint      bool // maintenance mode is on
	cleaned    bool // predecessors were removed
}

var _ registry.Registrar = (*Registrar)(nil)

// New validates opts and returns a Registrar. It makes no call to Consul:
// an unreachable agent at start only delays the registration, which the
// heartbeat retries. It returns a *lifecycle.RangeError for an out-of-range
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
		opts:      opts,
		id:        opts.ID,
		checkID:   "service:" + opts.ID,
		client:    client,
		log:       logger.With("registrar", "consul", "service", opts.Service, "id", opts.ID),
		appliedCh: make(chan struct{}),
		status:    registry.Status{ID: opts.ID, Service: opts.Service, Health: registry.Absent},
		kick:      make(chan struct{}, 1),
	}
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
func (r *Registrar) Status() registry.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// Sync brings Consul in line with t: the first READY registers the service
// and its passing TTL check in one call; later transitions set the check
// passing (READY) or critical (EJECTED by the readiness checks), or turn
// maintenance mode on (EJECTED by an operator) or off. EJECTED before the
// first READY changes nothing, since nothing is registered yet.
//
// It returns once the worker applied t (or a later transition) with that
// outcome, or ctx's error if ctx ends first; the worker keeps retrying on
// each heartbeat either way. It returns ErrClosed after Close,
// registry.ErrDeregistered after Deregister, and an error for states other
// than READY and EJECTED.
func (r *Registrar) Sync(ctx context.Context, t lifecycle.Transition) error {
	if t.To != lifecycle.Ready && t.To != lifecycle.Ejected {
		return fmt.Errorf("consul: Sync with state %s: only READY and EJECTED are synced", t.To)
	}
	r.mu.Lock()
	switch {
	case r.status.Deregistering:
		r.mu.Unlock()
		return registry.ErrDeregistered
	case r.closed:
		r.mu.Unlock()
		return ErrClosed
	}
	r.gen++
	gen := r.gen
	r.want, r.reason = registry.HealthFor(t), t.To.String()+": "+t.Reason
	if t.To == lifecycle.Ready {
		r.everReady = true
	}
	if !r.everReady {
		r.applied, r.appliedErr = gen, nil
		r.mu.Unlock()
		return nil
	}
	if r.cancel == nil {
		wctx, cancel := context.WithCancel(context.Background())
		r.cancel, r.done = cancel, make(chan struct{})
		go r.run(wctx, r.done)
	}
	select {
	case r.kick <- struct{}{}:
	default:
	}
	done := r.done
	r.mu.Unlock()

	for {
		r.mu.Lock()
		applied, err, ch := r.applied, r.appliedErr, r.appliedCh
		r.mu.Unlock()
		if applied >= gen {
			return err
		}
		select {
		case <-ch:
		case <-done:
			return ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close stops the heartbeat and waits for its goroutine, then closes idle
// connections of the HTTP client New created. It does not deregister: the
// check turns critical after TTL and Consul removes the instance after
// DeregisterCriticalServiceAfter. Close is idempotent and returns nil.
func (r *Registrar) Close() error {
	r.mu.Lock()
	r.closed = true
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	if r.owned != nil {
		r.owned.CloseIdleConnections()
	}
	return nil
}

// stopWorker cancels the worker and waits for it, or for ctx. It reports
// whether the worker has returned (or never ran).
func (r *Registrar) stopWorker(ctx context.Context) bool {
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	if cancel == nil {
		return true
	}
	cancel()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}

// callCtx bounds one agent call by CallTimeout.
func (r *Registrar) callCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, r.opts.CallTimeout)
}

// wrote records a successful write; failed records a failed call and logs
// the first failure of a streak.
func (r *Registrar) wrote(update func(*registry.Status)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status.LastWrite = time.Now()
	r.status.LastError = ""
	if update != nil {
		update(&r.status)
	}
	if r.failing {
		r.failing = false
		r.log.Info("consul: agent calls succeed again")
	}
}

func (r *Registrar) failed(op string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status.LastError, r.status.LastErrorAt = op+": "+err.Error(), time.Now()
	if !r.failing {
		r.failing = true
		r.log.Warn("consul: agent call failed; retrying on each heartbeat", "op", op, "error", err)
	} else {
		r.log.Debug("consul: agent call failed", "op", op, "error", err)
	}
}

// StatusDetail returns Status for GET /state (lifecycle.StatusDetailer).
func (r *Registrar) StatusDetail() any { return r.Status() }
