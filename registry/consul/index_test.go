package consul

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/drainkit/drainkit/registry/consul/consultest"
	"github.com/hashicorp/consul/api"
)

func TestNextIndex(t *testing.T) {
	for _, c := range []struct {
		prev, got, next uint64
		reset           bool
	}{
		{0, 5, 5, false}, // first answer
		{5, 5, 5, false}, // timed out without change
		{5, 9, 9, false}, // changed
		{9, 4, 0, true},  // went backwards: start again
		{0, 0, 1, true},  // zero is never waited on
		{7, 0, 0, true},  // backwards to zero: start again (the next answer is rate-limited)
		{1, 1, 1, false}, // steady at 1
		{0, 1, 1, false}, // first answer 1
		{^uint64(0), ^uint64(0), ^uint64(0), false},
	} {
		next, reset := nextIndex(c.prev, c.got)
		if next != c.next || reset != c.reset {
			t.Errorf("nextIndex(%d, %d) = %d, %v; want %d, %v", c.prev, c.got, next, reset, c.next, c.reset)
		}
	}
}

// TestLostInstanceWithRealErrors classifies the errors a real agent returns.
func TestLostInstanceWithRealErrors(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	ag := c.Agent()
	lost := map[string]error{
		"heartbeat of an unknown check":  ag.UpdateTTL("service:nope", "", api.HealthPassing),
		"maintenance of unknown service": ag.EnableServiceMaintenance("nope", "x"),
		"deregister an unknown service":  ag.ServiceDeregister("nope"),
	}
	for name, err := range lost {
		if err == nil || !lostInstance(err) {
			t.Errorf("%s: %v: not recognised as a lost instance", name, err)
		}
	}
	if err := ag.ServiceRegister(&api.AgentServiceRegistration{ID: "s1", Name: "s",
		Check: &api.AgentServiceCheck{CheckID: "service:s1", TTL: "10s"}}); err != nil {
		t.Fatal(err)
	}
	notLost := map[string]error{
		"heartbeat with a bad status": ag.UpdateTTL("service:s1", "", "bogus"),
		"bad registration":            ag.ServiceRegister(&api.AgentServiceRegistration{ID: "s2", Name: "s", Check: &api.AgentServiceCheck{TTL: "nonsense"}}),
	}
	a.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, err := ag.ServicesWithFilterOpts("", (&api.QueryOptions{}).WithContext(ctx))
	notLost["agent down"] = err
	notLost["plain error"] = errors.New("Unknown check ID")
	for name, err := range notLost {
		if err == nil || lostInstance(err) {
			t.Errorf("%s: %v: wrongly recognised as a lost instance", name, err)
		}
	}
}
