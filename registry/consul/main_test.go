package consul

import (
	"context"
	"log/slog"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/internal/testpoll"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/registry/consul/consultest"
	"github.com/hashicorp/consul/api"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(example.RemoveAndExit))
}

// eventually polls cond until it holds and returns how long that took, or
// fails the test after timeout (see testpoll.Eventually).
var eventually = testpoll.Eventually

// Test timings: TTL 3s, heartbeat 1s.
const (
	testTTL       = 3 * time.Second
	testHeartbeat = time.Second
)

// testLogger returns a debug logger and its buffer, printed if t fails.
func testLogger(t *testing.T) (*slog.Logger, *testlog.Buffer) { return testlog.New(t, "registrar log") }

// testOptions returns options for a registrar against a: TTL 3s, heartbeat 1s.
func testOptions(t *testing.T, a *consultest.Agent, service string, port int) (Options, *testlog.Buffer) {
	lg, buf := testLogger(t)
	o := DefaultOptions(service, port)
	o.Address = "127.0.0.1"
	o.TTL, o.HeartbeatInterval = testTTL, testHeartbeat
	o.Consul = a.Config()
	o.Logger = lg
	return o, buf
}

func newRegistrar(t *testing.T, o Options) *Registrar {
	t.Helper()
	r, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// checkStatus returns the agent's status of checkID ("" if absent) and an
// error string if the agent could not be asked.
func checkStatus(c *api.Client, checkID string) string {
	checks, err := c.Agent().Checks()
	if err != nil {
		return "error: " + err.Error()
	}
	if ch := checks[checkID]; ch != nil {
		return ch.Status
	}
	return ""
}

// passingIDs lists the IDs the health endpoint returns as passing.
func passingIDs(c *api.Client, service string) ([]string, error) {
	entries, _, err := c.Health().Service(service, "", true, nil)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, e := range entries {
		ids = append(ids, e.Service.ID)
	}
	return ids, nil
}

func hasID(ids []string, id string) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// runner is a lifecycle running in the background.
type runner struct {
	lc   *lifecycle.Lifecycle
	done chan struct{}
	err  error
}

// wait waits up to d for Run to return and returns its result.
func (r *runner) wait(t *testing.T, d time.Duration) error {
	t.Helper()
	select {
	case <-r.done:
		return r.err
	case <-time.After(d):
		t.Fatalf("lifecycle did not stop within %s", d)
		return nil
	}
}

// testTimings are short lifecycle timings for in-process tests.
func testTimings() budget.Timings {
	return budget.Timings{WarmupTimeout: 10 * time.Second, PropagationMin: 500 * time.Millisecond,
		PropagationQuiet: 0, PropagationMax: 2 * time.Second, DrainTimeout: time.Second,
		StopTimeout: time.Second, GracePeriod: 10 * time.Second}
}

// newLifecycle returns a lifecycle with o, whose zero timings become
// testTimings, with r added. It listens for SIGUSR2 only, which nothing
// sends.
func newLifecycle(t *testing.T, r lifecycle.Registrar, o lifecycle.Options) *lifecycle.Lifecycle {
	t.Helper()
	lg, _ := testLogger(t)
	if o.Timings == (budget.Timings{}) {
		o.Timings = testTimings()
	}
	o.Signals = []os.Signal{syscall.SIGUSR2}
	o.Logger = lg
	lc, err := lifecycle.New(o)
	if err != nil {
		t.Fatal(err)
	}
	lc.AddRegistrar("consul", r)
	return lc
}

// start runs lc in the background; the test's cleanup drains it and waits.
func start(t *testing.T, lc *lifecycle.Lifecycle) *runner {
	rn := &runner{lc: lc, done: make(chan struct{})}
	go func() { rn.err = lc.Run(context.Background()); close(rn.done) }()
	t.Cleanup(func() {
		_ = lc.Drain("test cleanup")
		select {
		case <-rn.done:
		case <-time.After(15 * time.Second):
			t.Error("lifecycle did not stop within 15s")
		}
	})
	return rn
}
