package consultest

import (
	"testing"

	"github.com/hashicorp/consul/api"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestStartRestartStop starts an agent, registers a service, restarts the
// agent (the service is gone and the index restarts low), and stops it (the
// API refuses connections).
func TestStartRestartStop(t *testing.T) {
	a := Start(t)
	c := a.Client(t)
	if err := c.Agent().ServiceRegister(&api.AgentServiceRegistration{ID: "x1", Name: "x", Port: 1}); err != nil {
		t.Fatal(err)
	}
	_, meta, err := c.Catalog().Services(nil)
	if err != nil {
		t.Fatal(err)
	}
	before := meta.LastIndex
	if svcs, _ := c.Agent().Services(); svcs["x1"] == nil {
		t.Fatalf("service x1 not registered: %v", svcs)
	}

	a.Restart(t)
	svcs, err := c.Agent().Services()
	if err != nil {
		t.Fatal(err)
	}
	if svcs["x1"] != nil {
		t.Fatal("service x1 survived a dev agent restart")
	}
	_, meta, err = c.Catalog().Services(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("catalog index before restart %d, after %d", before, meta.LastIndex)

	a.Stop()
	if a.Running() {
		t.Fatal("Running after Stop")
	}
	if _, err := c.Agent().Services(); err == nil {
		t.Fatal("agent API still answers after Stop")
	}
	a.Stop() // idempotent
}
