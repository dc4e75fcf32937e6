package etcd_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/internal/testpoll"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/registry/etcd"
	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(example.RemoveAndExit))
}

// eventually polls cond until it holds and returns how long that took, or
// fails the test after timeout (see testpoll.Eventually).
var eventually = testpoll.Eventually

// Test timings: lease TTL 3s, keep-alive every 1s.
const (
	testTTL       = 3 * time.Second
	testKeepAlive = time.Second
)

// testLogger returns a debug logger and its buffer, printed if t fails.
func testLogger(t *testing.T) (*slog.Logger, *testlog.Buffer) { return testlog.New(t, "registrar log") }

// testOptions returns options for a registrar against s: TTL 3s, keep-alive
// every 1s, address 127.0.0.1.
func testOptions(t *testing.T, s *etcdtest.Server, service string, port int) (etcd.Options, *testlog.Buffer) {
	lg, buf := testLogger(t)
	o := etcd.DefaultOptions(service, port)
	o.Address = "127.0.0.1"
	o.TTL, o.KeepAliveInterval = testTTL, testKeepAlive
	o.Client = s.Config()
	o.Logger = lg
	return o, buf
}

func newRegistrar(t *testing.T, o etcd.Options) *etcd.Registrar {
	t.Helper()
	r, err := etcd.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	return r
}

// kratosValue is kratos's ServiceInstance JSON.
type kratosValue struct {
	ID        string            `json:"id"`
	Name      string            `json:"name"`
	Version   string            `json:"version"`
	Metadata  map[string]string `json:"metadata"`
	Endpoints []string          `json:"endpoints"`
}

// getKey returns the key's value and lease; found is false if it is absent.
func getKey(t *testing.T, c *clientv3.Client, key string) (v kratosValue, lease clientv3.LeaseID, found bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, key)
	if err != nil || len(resp.Kvs) == 0 {
		return v, 0, false, err
	}
	if err := json.Unmarshal(resp.Kvs[0].Value, &v); err != nil {
		t.Fatalf("value of %s is not kratos's instance JSON: %v: %s", key, err, resp.Kvs[0].Value)
	}
	return v, clientv3.LeaseID(resp.Kvs[0].Lease), true, nil
}

// leaseTTL returns the lease's remaining TTL in seconds (-1: gone).
func leaseTTL(t *testing.T, c *clientv3.Client, id clientv3.LeaseID) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	resp, err := c.TimeToLive(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return resp.TTL
}

// testTimings are short lifecycle timings for in-process tests.
func testTimings() budget.Timings {
	return budget.Timings{WarmupTimeout: 10 * time.Second, PropagationMin: 500 * time.Millisecond,
		PropagationQuiet: 0, PropagationMax: 2 * time.Second, DrainTimeout: time.Second,
		StopTimeout: time.Second, GracePeriod: 10 * time.Second}
}

// newLifecycle returns a lifecycle with testTimings, with r added. It
// listens for SIGUSR2 only, which nothing sends.
func newLifecycle(t *testing.T, r lifecycle.Registrar) *lifecycle.Lifecycle {
	t.Helper()
	lg, _ := testLogger(t)
	lc, err := lifecycle.New(lifecycle.Options{Timings: testTimings(), Signals: []os.Signal{syscall.SIGUSR2}, Logger: lg})
	if err != nil {
		t.Fatal(err)
	}
	lc.AddRegistrar("etcd", r)
	return lc
}

// run runs lc in the background; the returned channel yields Run's error.
// The test's cleanup drains it and waits.
func run(t *testing.T, lc *lifecycle.Lifecycle) chan error {
	done := make(chan error, 1)
	go func() { done <- lc.Run(context.Background()) }()
	t.Cleanup(func() {
		_ = lc.Drain("test cleanup")
		select {
		case err := <-done:
			done <- err
		case <-time.After(15 * time.Second):
			t.Error("lifecycle did not stop within 15s")
		}
	})
	return done
}
