package registrytest_test

import (
	"context"
	"fmt"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry/registrytest"
)

// Memory stands in for a registry in a service's tests: it follows the
// lifecycle's transitions as registry/consul does and records every call.
func ExampleMemory() {
	ctx := context.Background()
	m := registrytest.NewMemory("api")
	show := func() {
		s := m.Status()
		fmt.Printf("health=%s registrations=%d deregistering=%t\n", s.Health, s.Registrations, s.Deregistering)
	}

	_ = m.Sync(ctx, lifecycle.Transition{To: lifecycle.Ejected, Cause: lifecycle.CauseChecks}) // before READY: nothing to take out
	show()
	_ = m.Sync(ctx, lifecycle.Transition{To: lifecycle.Ready, Cause: lifecycle.CauseWarmup})
	show()
	_ = m.Sync(ctx, lifecycle.Transition{To: lifecycle.Ejected, Cause: lifecycle.CauseOperator})
	show()
	_ = m.Deregister(ctx)
	show()
	fmt.Println(m.Sync(ctx, lifecycle.Transition{To: lifecycle.Ready, Cause: lifecycle.CauseOperator}))
	for _, op := range m.Ops() {
		if op.Kind == registrytest.OpSync {
			fmt.Println(op.Kind, op.To)
		} else {
			fmt.Println(op.Kind)
		}
	}
	// Output:
	// health=absent registrations=0 deregistering=false
	// health=passing registrations=1 deregistering=false
	// health=maintenance registrations=1 deregistering=false
	// health=absent registrations=1 deregistering=true
	// registry: deregistered: a draining instance is never registered again
	// sync EJECTED
	// sync READY
	// sync EJECTED
	// deregister
	// sync READY
}
