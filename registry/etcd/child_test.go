package etcd_test

// Acceptance tests of issue 12 that run examples/httpservice as a real child
// process registered in a real etcd, and send it real signals.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/childtest"
	"github.com/drainkit/drainkit/internal/testpoll"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/etcd"
	"github.com/drainkit/drainkit/registry/etcd/etcdtest"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// example is examples/httpservice, built once per test run; TestMain
// removes it.
var example = childtest.NewOnce("github.com/drainkit/drainkit/examples/httpservice")

// childTimings are the DRAINKIT_* settings of the child tests (see
// childtest.Timings) with lease TTL 3s kept alive every 1s.
var childTimings = childtest.Timings("DRAINKIT_REGISTRY_ETCD_TTL=3s", "DRAINKIT_REGISTRY_ETCD_KEEPALIVE_INTERVAL=1s")

func startChild(t *testing.T, s *etcdtest.Server, args ...string) *childtest.Child {
	t.Helper()
	return childtest.Start(t, example.Path(t), append(s.Env(), childTimings...), args...)
}

// instanceKeys lists the keys under the service's prefix.
func instanceKeys(c *clientv3.Client, service string) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	resp, err := c.Get(ctx, etcd.ServicePrefix(etcd.DefaultPrefix, service), clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, kv := range resp.Kvs {
		keys = append(keys, string(kv.Key))
	}
	return keys, nil
}

// onlyKey waits until exactly one instance of service is registered and
// returns its key.
func onlyKey(t *testing.T, c *clientv3.Client, service string, timeout time.Duration) string {
	t.Helper()
	return testpoll.One(t, timeout, "one instance of "+service, func() ([]string, error) { return instanceKeys(c, service) })
}

// TestChildWarmup: a 1s warm-up; whenever etcd holds the instance's key,
// /readyz already answers 200; the key appears once READY.
func TestChildWarmup(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	const svc = "warmup-svc"
	example.Path(t) // build first: the clock starts with the child
	start := time.Now()
	ch := startChild(t, s, "--warmup", "1s", "--service", svc)
	saw503 := false
	var present time.Duration
	eventually(t, 10*time.Second, "key after warm-up", func() (bool, string) {
		keys, err := instanceKeys(c, svc)
		if err != nil {
			return false, err.Error()
		}
		code := ch.Probe("/readyz") // after the read: if the key was there, READY came first
		saw503 = saw503 || code == http.StatusServiceUnavailable
		if len(keys) > 0 && code != http.StatusOK {
			t.Fatalf("key present %s after start while /readyz answers %d", time.Since(start), code)
		}
		present = time.Since(start)
		return len(keys) == 1, fmt.Sprintf("%d keys, readyz %d", len(keys), code)
	})
	if !saw503 {
		t.Fatal("/readyz never answered 503: the warm-up was not observed")
	}
	t.Logf("key present %s after the child started (warm-up 1s)", present.Round(time.Millisecond))
	if present < time.Second {
		t.Fatalf("key present %s after start, before the 1s warm-up ended", present)
	}
	ch.Signal(syscall.SIGTERM)
	if code := ch.WaitExit(15 * time.Second); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// TestChildSIGTERM: on SIGTERM the key is gone before the propagation window
// ends, a watch sees the deletion, and the timeline records the deregistered
// (lease revoked) and confirmed offsets.
func TestChildSIGTERM(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	const svc = "sigterm-svc"
	ch := startChild(t, s, "--service", svc)
	key := onlyKey(t, c, svc, 10*time.Second)
	id := key[strings.LastIndex(key, "/")+1:]

	views := make(chan registry.View, 16)
	ctx, cancel := context.WithCancel(context.Background())
	wdone := make(chan struct{})
	go func() {
		defer close(wdone)
		_ = etcd.Watch(ctx, c, svc, etcd.WatchOptions{}, func(v registry.View) { views <- v })
	}()
	defer func() { cancel(); <-wdone }()
	if v := <-views; !v.Has(id) {
		t.Fatalf("first view %+v lacks %s", v, id)
	}

	sig := time.Now()
	ch.Signal(syscall.SIGTERM)
	// The promise is "gone before the window ends", and the window's end is
	// the child's own (win.At below, at least propagation.min after its
	// drain began, which is after sig). The poll therefore allows up to
	// propagation.max, the latest the window may end; gone > win.At below
	// checks the promise against the window that actually ran.
	gone := eventually(t, childtest.PropagationMax, "key gone before the window ends", func() (bool, string) {
		keys, err := instanceKeys(c, svc)
		return err == nil && len(keys) == 0, fmt.Sprint(keys, err)
	})
	var watched time.Duration
	select {
	case v := <-views:
		watched = time.Since(sig)
		if v.Err != nil || v.Has(id) {
			t.Fatalf("view after SIGTERM: %+v", v)
		}
	case <-time.After(childtest.PropagationMin):
		t.Fatal("the watch did not see the deletion within propagation.min")
	}
	dereg, conf, win := ch.CleanDrain(childtest.Budget + 2*time.Second)
	t.Logf("after SIGTERM: lease revoked at %s, confirmed at %s (timeline); key gone by %s, watch saw it by %s (observed); window ended at %s",
		dereg.At, conf.At, gone.Round(time.Millisecond), watched.Round(time.Millisecond), win.At)
	if conf.At > win.At || gone > win.At || watched > win.At {
		t.Fatal("the key was still there when the window ended")
	}
}

// TestChildEtcdStoppedBeforeSIGTERM: with etcd gone, the drain still
// completes within its budget and logs the failed revocation.
func TestChildEtcdStoppedBeforeSIGTERM(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	const svc = "down-svc"
	ch := startChild(t, s, "--service", svc)
	onlyKey(t, c, svc, 10*time.Second)
	s.Stop()
	sig := time.Now()
	ch.Signal(syscall.SIGTERM)
	ch.DrainRegistryDown(sig, "etcd", "revocation") // the exit, budget and step checks
	if len(ch.LogLines("etcd: deregistration failed; the key leaves when the lease expires")) != 1 {
		t.Fatal("the registrar did not log the failed revocation")
	}
}

// TestChildKill9: a killed child's key disappears within the lease TTL, and
// a process restarted on the same address at once is not disturbed by it:
// its own key stays after the predecessor's lease expired.
func TestChildKill9(t *testing.T) {
	s := etcdtest.Start(t)
	c := s.Client(t)
	const svc = "kill9-svc"
	const ttl = 3 * time.Second
	addr := childtest.FreeAddr(t)
	first := startChild(t, s, "--service", svc, "--http-addr", addr)
	oldKey := onlyKey(t, c, svc, 10*time.Second)

	// The deletion is timed by a watch on the old key, opened before the
	// kill. The polls below wait for the successor first, which can take
	// longer than the TTL on a loaded machine: a poll that only then looks
	// for the old key would time the successor's start, not the lease.
	deleted := watchDeletion(t, c, oldKey)
	if err := first.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	first.WaitExit(5 * time.Second)
	startChild(t, s, "--service", svc, "--http-addr", addr)
	var newKey string
	eventually(t, 10*time.Second, "the successor registered", func() (bool, string) {
		keys, err := instanceKeys(c, svc)
		for _, k := range keys {
			if k != oldKey {
				newKey = k
			}
		}
		return newKey != "", fmt.Sprint(keys, err)
	})
	eventually(t, ttl+time.Second, "the killed child's key gone", func() (bool, string) {
		keys, err := instanceKeys(c, svc)
		return err == nil && !containsKey(keys, oldKey), fmt.Sprint(keys, err)
	})
	var gone time.Duration
	select {
	case at := <-deleted:
		gone = at.Sub(killed)
	case <-time.After(5 * time.Second):
		t.Fatal("the watch on the killed child's key saw no deletion")
	}
	t.Logf("killed child's key gone %s after kill -9 (lease TTL %s)", gone.Round(time.Millisecond), ttl)
	if gone > ttl+500*time.Millisecond {
		t.Errorf("gone after %s, later than the TTL %s (+500ms: etcd checks expiry every 500ms)", gone, ttl)
	}
	time.Sleep(time.Second) // one keep-alive period after the predecessor's lease ended
	if keys, err := instanceKeys(c, svc); err != nil || len(keys) != 1 || keys[0] != newKey {
		t.Fatalf("after the predecessor's lease ended: %v (%v); want only %s", keys, err, newKey)
	}
}

// watchDeletion watches key from the current revision on and sends the time
// at which the watch delivered its deletion; the watch ends with the test.
func watchDeletion(t *testing.T, c *clientv3.Client, key string) <-chan time.Time {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := c.Get(ctx, key)
	if err != nil {
		cancel()
		t.Fatalf("get %s before watching it: %v", key, err)
	}
	if len(resp.Kvs) != 1 {
		cancel()
		t.Fatalf("get %s before watching it: %d keys", key, len(resp.Kvs))
	}
	// From the revision after the read: a watch the server sets up late
	// still replays the deletion.
	wch := c.Watch(ctx, key, clientv3.WithRev(resp.Header.Revision+1))
	deleted := make(chan time.Time, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for wr := range wch {
			for _, ev := range wr.Events {
				if ev.Type == clientv3.EventTypeDelete {
					deleted <- time.Now()
					return
				}
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return deleted
}

func containsKey(keys []string, k string) bool {
	for _, x := range keys {
		if x == k {
			return true
		}
	}
	return false
}

// TestChildInvalidSettings: invalid etcd settings fail at start (exit 2,
// nothing started) with a message naming the key.
func TestChildInvalidSettings(t *testing.T) {
	for _, c := range []struct{ env, key string }{
		{"DRAINKIT_REGISTRY_ETCD_TTL=1s", "registry.etcd.ttl"},
		{"DRAINKIT_REGISTRY_ETCD_KEEPALIVE_INTERVAL=2s", "registry.etcd.keepalive_interval"}, // TTL 3s: > TTL/3
		{"ETCD_ENDPOINTS=,", "registry.etcd.endpoints"},
	} {
		t.Run(c.key, func(t *testing.T) {
			// No etcd is needed: the settings fail before any call.
			env := append([]string{"ETCD_ENDPOINTS=127.0.0.1:1"}, childTimings...)
			ch := childtest.StartNoWait(t, example.Path(t), append(env, c.env), "--service", "invalid")
			if code := ch.WaitExit(10 * time.Second); code != 2 {
				t.Fatalf("exit code %d, want 2:\n%s", code, ch.Logs())
			}
			if out := ch.Logs(); !strings.Contains(out, c.key) {
				t.Fatalf("message does not name %s:\n%s", c.key, out)
			}
			t.Logf("%s -> %s", c.env, strings.TrimSpace(ch.Logs()))
		})
	}
}
