package consul_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/consumer"
	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/consul"
	"github.com/drainkit/drainkit/registry/consul/consultest"
	"github.com/hashicorp/consul/api"
)

// The helpers of the tests that run a consumer.Watcher on a Consul source
// behind a proxy (reset_test.go, replay_test.go).

// registerPassing registers instance id of svc at 127.0.0.1:port with a TTL
// check that passes for an hour.
func registerPassing(t *testing.T, c *api.Client, svc, id string, port int) {
	t.Helper()
	if err := c.Agent().ServiceRegister(&api.AgentServiceRegistration{ID: id, Name: svc, Address: "127.0.0.1", Port: port,
		Check: &api.AgentServiceCheck{CheckID: "service:" + id, TTL: "1h", Status: api.HealthPassing}}); err != nil {
		t.Fatal(err)
	}
}

// raiseIndex registers and deregisters 30 throwaway instances of svc, which
// raises the service's index well above what a restarted agent reaches with
// a few registrations.
func raiseIndex(t *testing.T, c *api.Client, svc string) {
	t.Helper()
	for i := range 30 {
		id := fmt.Sprintf("churn-%d", i)
		registerPassing(t, c, svc, id, 1)
		if err := c.Agent().ServiceDeregister(id); err != nil {
			t.Fatal(err)
		}
	}
}

// watchThrough returns a consumer.Watcher of svc (closed when the test ends)
// whose Consul client reaches a's agent through the proxy at addr, with
// blocking queries of 5s, and the Watcher's logger and log.
func watchThrough(t *testing.T, a *consultest.Agent, addr, svc string) (*consumer.Watcher, *slog.Logger, *testlog.Buffer) {
	t.Helper()
	cfg := a.Config()
	cfg.Address = addr
	cfg.HttpClient = &http.Client{Transport: &http.Transport{}}
	t.Cleanup(cfg.HttpClient.CloseIdleConnections)
	c, err := api.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lg, logs := testlog.New(t, "consumer log")
	w, err := consumer.NewWatcher(consumer.WatcherOptions{Service: svc, Logger: lg,
		Source: consul.NewSource(c, svc, consul.WatchOptions{WaitTime: 5 * time.Second})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w, lg, logs
}

// lists returns a poll condition (testpoll.Eventually): w's candidate view
// lists exactly the instances ids, in order.
func lists(w *consumer.Watcher, ids ...string) func() (bool, string) {
	return func() (bool, string) {
		v := w.View()
		return strings.Join(instanceIDs(v), ",") == strings.Join(ids, ","), "consumer lists " + describe(v)
	}
}

func instanceIDs(v registry.View) []string {
	ids := make([]string, 0, len(v.Instances))
	for _, in := range v.Instances {
		ids = append(ids, in.ID)
	}
	return ids
}

// describe is v's instance IDs, epoch and revision.
func describe(v registry.View) string {
	return fmt.Sprintf("%v at epoch %d, revision %d", instanceIDs(v), v.Epoch, v.Revision)
}
