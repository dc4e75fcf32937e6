package regworker

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
)

// Wanted is what the lifecycle last asked a registrar for.
type Wanted struct {
	// Gen counts the Sync calls; a step applying Gen answers every Sync
	// call up to it.
	Gen uint64
	// Health is the registry health the latest transition maps to
	// (registry.HealthFor).
	Health registry.Health
	// Reason is the latest transition's "<state>: <reason>".
	Reason string
	// ReadyAt is the latest READY's time (its At, or the time of the Sync
	// call when zero); zero before the first READY: nothing is registered
	// then.
	ReadyAt time.Time
}

// Core is the part of a registrar that every registry plugin shares: the
// state the lifecycle wants (Sync), the registry.Status it reports, the
// end states (deregistering, closed) and the Worker that applies the
// wanted state. The registry-specific step runs in the worker; what it
// reads and writes of the registry stays in the plugin. Create it with
// NewCore; its methods are safe for concurrent use.
type Core struct {
	errClosed error

	mu     sync.Mutex
	wanted Wanted
	status registry.Status // Deregistering set by BeginDeregister
	closed bool
	streak Streak

	worker Worker
}

// NewCore returns a Core reporting status (ID, Service, Health Absent)
// and logging failure streaks through streak; Sync returns errClosed after
// Close.
func NewCore(status registry.Status, streak Streak, errClosed error) *Core {
	return &Core{status: status, streak: streak, errClosed: errClosed}
}

// Sync records t as the wanted state and, once there was a READY, kicks
// the worker (starting it on the first READY, stepping every period
// otherwise) and waits until a step applied t or a later transition: it
// returns that step's error, or ctx's error if ctx ends first (the worker
// keeps retrying either way). EJECTED before the first READY returns nil
// at once: nothing is registered yet. It returns an error for states other
// than READY and EJECTED, registry.ErrDeregistered after BeginDeregister
// and errClosed after Close.
func (c *Core) Sync(ctx context.Context, t lifecycle.Transition, period time.Duration, step func(context.Context) Outcome) error {
	if err := registry.CheckSyncable(t); err != nil {
		return err
	}
	gen, done, err := c.accept(t, period, step)
	if err != nil || done == nil {
		return err
	}
	return c.worker.Await(ctx, done, gen, c.errClosed)
}

func (c *Core) accept(t lifecycle.Transition, period time.Duration, step func(context.Context) Outcome) (uint64, <-chan struct{}, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.status.Deregistering:
		return 0, nil, registry.ErrDeregistered
	case c.closed:
		return 0, nil, c.errClosed
	}
	c.wanted.Gen++
	c.wanted.Health, c.wanted.Reason = registry.HealthFor(t), t.To.String()+": "+t.Reason
	if t.To == lifecycle.Ready {
		c.wanted.ReadyAt = cmp.Or(t.At, time.Now())
	}
	if c.wanted.ReadyAt.IsZero() {
		return 0, nil, nil
	}
	return c.wanted.Gen, c.worker.Kick(period, step), nil
}

// Wanted returns the wanted state; the worker's step reads it.
func (c *Core) Wanted() Wanted {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wanted
}

// BeginDeregister starts the deregistration: Sync refuses from now on and
// the worker is stopped, so the instance is never registered again. first
// is false when an earlier call began it (the caller returns nil then);
// stopped is false when the worker was still running when ctx ended.
func (c *Core) BeginDeregister(ctx context.Context) (first, stopped bool) {
	c.mu.Lock()
	if c.status.Deregistering {
		c.mu.Unlock()
		return false, true
	}
	c.status.Deregistering = true
	c.mu.Unlock()
	return true, c.worker.Stop(ctx)
}

// Close makes Sync return errClosed and stops the worker, waiting for it
// until ctx ends. It reports whether the worker has returned (or never
// ran); if not, the worker's step has been cancelled and ends at its next
// check of its context. A registrar bounds it by its close timeout: a step
// blocked in a call that takes no context must not hold up the stop hooks.
func (c *Core) Close(ctx context.Context) bool {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	return c.worker.Stop(ctx)
}

// Closed reports whether Close was called.
func (c *Core) Closed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closed
}

// Status returns the status last recorded. It never blocks on a registry.
func (c *Core) Status() registry.Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.status
}

// Update changes the status with update.
func (c *Core) Update(update func(*registry.Status)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	update(&c.status)
}

// Wrote records a successful write, ending a failure streak, then applies
// update (if not nil).
func (c *Core) Wrote(update func(*registry.Status)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.streak.Wrote(&c.status, update)
}

// Failed records a failed call, op naming it, and logs the first failure
// of a streak.
func (c *Core) Failed(op string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.streak.Failed(&c.status, op, err)
}
