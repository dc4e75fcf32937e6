package registry

import (
	"errors"
	"fmt"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
)

// Registrar is a lifecycle.Registrar that can also confirm its
// deregistration, report its status and release its resources. Both
// consul.Registrar and Memory implement it.
type Registrar interface {
	lifecycle.Registrar
	lifecycle.DeregistrationConfirmer
	// Status returns a snapshot of what the registrar last told the
	// registry. It never blocks on the registry.
	Status() Status
	// Close stops background work (heartbeats) and releases connections
	// without deregistering: a closed registration expires through its
	// health check instead. It is idempotent and returns nil unless
	// releasing a resource failed.
	Close() error
}

// Health is the state a registrar last wrote to the registry for its
// instance.
type Health string

// Health values.
const (
	// Absent: not registered (never was, lost by the registry, or
	// deregistered).
	Absent Health = "absent"
	// Passing: registered and in rotation (READY).
	Passing Health = "passing"
	// Critical: registered but out of rotation because the readiness
	// checks ejected the instance (EJECTED with cause checks).
	Critical Health = "critical"
	// Maintenance: registered but out of rotation because an operator
	// ejected the instance (EJECTED with cause operator).
	Maintenance Health = "maintenance"
)

// ErrDeregistered is returned by Sync once Deregister has been called: a
// draining instance is never registered again.
var ErrDeregistered = errors.New("registry: deregistered: a draining instance is never registered again")

// Status is a registrar's view of its instance, for GET /state and tests.
// Times are zero when the event has not happened.
type Status struct {
	// ID is the instance ID in the registry (see InstanceID).
	ID string `json:"id"`
	// Service is the service name.
	Service string `json:"service"`
	// Health is what the registrar last wrote successfully; Absent before
	// the first registration and after deregistration.
	Health Health `json:"health"`
	// Registrations counts successful registrations: 1 after the first,
	// more when the registry lost the instance and it was registered again.
	Registrations int `json:"registrations"`
	// Deregistering is true once Deregister has been called.
	Deregistering bool `json:"deregistering"`
	// LastWrite is when the registry last accepted a write (registration,
	// heartbeat, maintenance toggle or deregistration).
	LastWrite time.Time `json:"last_write,omitzero"`
	// LastError is the last failed call's error ("" if the last call
	// succeeded) and LastErrorAt its time. Tokens never appear here.
	LastError   string    `json:"last_error,omitempty"`
	LastErrorAt time.Time `json:"last_error_at,omitzero"`
}

// CheckSyncable returns nil for a transition a registrar's Sync takes (to
// READY or EJECTED) and an error naming the state otherwise: the filter every
// Registrar applies first.
func CheckSyncable(t lifecycle.Transition) error {
	if t.To == lifecycle.Ready || t.To == lifecycle.Ejected {
		return nil
	}
	return fmt.Errorf("registry: Sync with state %s: only READY and EJECTED are synced", t.To)
}

// HealthFor maps a lifecycle transition to the Health a registrar should
// write: READY -> Passing; EJECTED -> Maintenance for an operator eject,
// Critical otherwise; any other state -> Absent.
func HealthFor(t lifecycle.Transition) Health {
	switch t.To {
	case lifecycle.Ready:
		return Passing
	case lifecycle.Ejected:
		if t.Cause == lifecycle.CauseOperator {
			return Maintenance
		}
		return Critical
	}
	return Absent
}
