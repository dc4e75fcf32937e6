package registrytest

import (
	"context"
	"sync"
	"time"

	"github.com/drainkit/drainkit/internal/syncx"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
)

// Memory is an in-memory fake registry.Registrar for tests, in the spirit of
// tableflip's testing fake: it behaves like registry/consul without a network
// (register on the first READY, critical on EJECTED, maintenance on an
// operator eject, absent after Deregister), records every call, checks the
// lifecycle's side of the contract, and lets a test make the registry fail or
// hang.
//
// Use it to test a service's wiring (lc.AddRegistrar("fake", m)) and drain
// behaviour without Consul:
//
//	m := registrytest.NewMemory("api")
//	lc.AddRegistrar("memory", m)
//	... start Run, wait until READY ...
//	m.Wait(ctx, func(s registry.Status) bool { return s.Health == registry.Passing })
//	m.SetHang(registrytest.OpDeregister, true) // an unreachable registry
//	lc.Drain("test")                      // must still complete
//
// The zero value is not usable; call NewMemory. Methods are safe for
// concurrent use. Memory has no background goroutines, so Close only marks
// it closed.
type Memory struct {
	mu     sync.Mutex
	status registry.Status
	ops    []Op
	errs   map[OpKind]error
	hang   map[OpKind]bool
	latest syncx.Latest[registry.Status] // status, published on every change for Wait
	closed bool
}

// OpKind names a registry.Registrar call.
type OpKind string

// Operation kinds recorded by Memory.
const (
	OpSync       OpKind = "sync"
	OpDeregister OpKind = "deregister"
	OpConfirm    OpKind = "confirm"
)

// Op is one recorded call. To and Cause are set for OpSync. Err is what the
// call returned.
type Op struct {
	Kind  OpKind
	To    lifecycle.State
	Cause lifecycle.Cause
	At    time.Time
	Err   error
}

// NewMemory returns a fake registrar for service with a fresh registry.InstanceID (port
// 0), in Health registry.Absent.
func NewMemory(service string) *Memory {
	m := &Memory{
		status: registry.Status{ID: registry.InstanceID(service, 0), Service: service, Health: registry.Absent},
		errs:   map[OpKind]error{},
		hang:   map[OpKind]bool{},
	}
	m.latest.Publish(m.status)
	return m
}

var _ registry.Registrar = (*Memory)(nil)

// SetError makes every later call of kind fail with err without changing the
// fake registry (nil restores success). A failed OpConfirm returns err at once.
func (m *Memory) SetError(kind OpKind, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.errs[kind] = err
}

// SetHang makes every later call of kind block until its context is done and
// then return the context's error, as an unreachable registry would (false
// restores normal behaviour; calls already hanging keep hanging).
func (m *Memory) SetHang(kind OpKind, hang bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hang[kind] = hang
}

// begin applies SetHang and SetError for a call of kind. It returns a non-nil
// error when the call must fail.
func (m *Memory) begin(ctx context.Context, kind OpKind) error {
	m.mu.Lock()
	hang, err := m.hang[kind], m.errs[kind]
	m.mu.Unlock()
	if hang {
		<-ctx.Done()
		return ctx.Err()
	}
	return err
}

// Sync registers the instance on the first READY and then follows t.To as
// HealthFor says. An EJECTED transition before the first registration
// changes nothing (nothing is registered to take out of rotation). It returns
// registry.ErrDeregistered after Deregister, and an error for a state other than READY
// or EJECTED; both are contract violations by the caller and are recorded.
func (m *Memory) Sync(ctx context.Context, t lifecycle.Transition) error {
	err := m.begin(ctx, OpSync)
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case err != nil:
	case m.status.Deregistering:
		err = registry.ErrDeregistered
	default:
		if err = registry.CheckSyncable(t); err == nil {
			m.followLocked(t)
		}
	}
	m.record(Op{Kind: OpSync, To: t.To, Cause: t.Cause, Err: err})
	return err
}

// followLocked applies a syncable transition to the fake registry.
func (m *Memory) followLocked(t lifecycle.Transition) {
	if m.status.Health == registry.Absent && t.To != lifecycle.Ready {
		return // never registered: stay absent
	}
	if m.status.Health == registry.Absent {
		m.status.Registrations++
	}
	m.status.Health = registry.HealthFor(t)
	m.status.LastWrite = time.Now()
}

// Deregister removes the instance (Health registry.Absent) and marks the registrar as
// deregistering, after which Sync fails with registry.ErrDeregistered. Calling it
// again is harmless and returns nil.
func (m *Memory) Deregister(ctx context.Context) error {
	err := m.begin(ctx, OpDeregister)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.status.Deregistering = true
	if err == nil {
		m.status.Health = registry.Absent
		m.status.LastWrite = time.Now()
	}
	m.record(Op{Kind: OpDeregister, Err: err})
	return err
}

// Confirm returns nil as soon as the fake registry no longer lists the
// instance as passing, or ctx's error when ctx ends first.
func (m *Memory) Confirm(ctx context.Context) error {
	if err := m.begin(ctx, OpConfirm); err != nil {
		m.mu.Lock()
		m.record(Op{Kind: OpConfirm, Err: err})
		m.mu.Unlock()
		return err
	}
	err := m.Wait(ctx, func(s registry.Status) bool { return s.Health != registry.Passing })
	m.mu.Lock()
	m.record(Op{Kind: OpConfirm, Err: err})
	m.mu.Unlock()
	return err
}

// Status returns the fake registry's view of the instance.
func (m *Memory) Status() registry.Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.status
}

// Ops returns a copy of every call recorded so far, oldest first.
func (m *Memory) Ops() []Op {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Op(nil), m.ops...)
}

// Wait blocks until cond(Status()) is true (nil) or ctx is done (ctx.Err()).
// cond is called without Memory's lock held and must not block.
func (m *Memory) Wait(ctx context.Context, cond func(registry.Status) bool) error {
	_, err := m.latest.WaitFor(ctx, nil, cond)
	return err
}

// Close marks the fake closed; Closed reports it. It returns nil.
func (m *Memory) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	return nil
}

// Closed reports whether Close was called.
func (m *Memory) Closed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.closed
}

// record appends op and wakes waiters. Called with m.mu held.
func (m *Memory) record(op Op) {
	op.At = time.Now()
	if op.Err != nil {
		m.status.LastError, m.status.LastErrorAt = op.Err.Error(), op.At
	} else {
		m.status.LastError = ""
	}
	m.ops = append(m.ops, op)
	m.latest.Publish(m.status)
}

// StatusDetail returns Status for GET /state (lifecycle.StatusDetailer).
func (m *Memory) StatusDetail() any { return m.Status() }
