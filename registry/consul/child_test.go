package consul

// Acceptance tests of issue 6 that run examples/httpservice as a real child
// process registered in a real dev agent, and send it real signals.

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/childtest"
	"github.com/drainkit/drainkit/internal/testpoll"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/consul/consultest"
	"github.com/hashicorp/consul/api"
)

// example is examples/httpservice, built once per test run; TestMain
// removes it.
var example = childtest.NewOnce("github.com/drainkit/drainkit/examples/httpservice")

// childTimings are the DRAINKIT_* settings of the child tests (see
// childtest.Timings) with TTL 3s and a heartbeat every 1s.
var childTimings = childtest.Timings("DRAINKIT_REGISTRY_TTL=3s", "DRAINKIT_REGISTRY_HEARTBEAT_INTERVAL=1s")

// child is examples/httpservice running as a child process (see package
// childtest).
type child = childtest.Child

// startChild runs the example with env added to the test's environment
// (without its DRAINKIT_* and CONSUL_* variables) and waits for its
// "started" line.
func startChild(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	return childtest.Start(t, example.Path(t), env, args...)
}

func startChildNoWait(t *testing.T, env []string, args ...string) *child {
	t.Helper()
	return childtest.StartNoWait(t, example.Path(t), env, args...)
}

// childEnv is the environment of a child registering in a.
func childEnv(a *consultest.Agent, extra ...string) []string {
	return append(append(append([]string{}, a.Env()...), childTimings...), extra...)
}

// onlyInstance waits until exactly one instance of service passes and
// returns its ID.
func onlyInstance(t *testing.T, c *api.Client, service string, timeout time.Duration) string {
	t.Helper()
	return testpoll.One(t, timeout, "one passing instance of "+service, func() ([]string, error) { return passingIDs(c, service) })
}

// TestChildWarmupAbsentUntilReady: a 1s warm-up; whenever the catalog lists
// the instance (in any state), /readyz already answers 200; then it passes.
func TestChildWarmupAbsentUntilReady(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	const svc = "warmup-svc"
	start := time.Now()
	ch := startChild(t, childEnv(a), "--warmup", "1s", "--service", svc)
	var firstReady, firstPassing time.Time
	saw503 := false
	eventually(t, 10*time.Second, "passing after warm-up", func() (bool, string) {
		entries, _, err := c.Health().Service(svc, "", false, nil) // any state
		if err != nil {
			return false, err.Error()
		}
		code := ch.Probe("/readyz") // after the catalog: if listed, READY came first
		now := time.Now()
		if code == http.StatusServiceUnavailable {
			saw503 = true
		}
		if code == http.StatusOK && firstReady.IsZero() {
			firstReady = now
		}
		if len(entries) > 0 && code != http.StatusOK {
			t.Fatalf("listed in the catalog %s after start while /readyz answers %d", now.Sub(start), code)
		}
		if len(entries) == 1 && entries[0].Checks.AggregatedStatus() == api.HealthPassing {
			firstPassing = now
			return true, ""
		}
		return false, fmt.Sprintf("%d entries, readyz %d", len(entries), code)
	})
	if !saw503 {
		t.Fatal("/readyz never answered 503: the warm-up was not observed")
	}
	t.Logf("readyz 200 at %s, passing at %s after the child started (warm-up 1s)",
		firstReady.Sub(start).Round(time.Millisecond), firstPassing.Sub(start).Round(time.Millisecond))
	if firstPassing.Sub(start) < time.Second {
		t.Fatalf("passing %s after start, before the 1s warm-up ended", firstPassing.Sub(start))
	}
	ch.Cmd.Process.Signal(syscall.SIGTERM)
	if code := ch.WaitExit(15 * time.Second); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// TestChildSIGTERM: on SIGTERM the instance leaves health/service?passing
// before the propagation window ends, a watch sees it go, and the timeline
// records the deregistered and confirmed offsets.
func TestChildSIGTERM(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	const svc = "sigterm-svc"
	ch := startChild(t, childEnv(a), "--service", svc)
	id := onlyInstance(t, c, svc, 10*time.Second)

	w := NewWatcher(c, svc, WatchOptions{WaitTime: 5 * time.Second})
	defer w.Close()
	ctx := t.Context()
	if _, err := w.WaitFor(ctx, func(v registry.View) bool { return v.Has(id) }); err != nil {
		t.Fatal(err)
	}
	watchGone := make(chan time.Time, 1)
	go func() {
		if _, err := w.WaitFor(ctx, func(v registry.View) bool { return v.Err == nil && !v.Has(id) }); err == nil {
			watchGone <- time.Now()
		}
	}()

	sig := time.Now()
	ch.Cmd.Process.Signal(syscall.SIGTERM)
	// The promise is "gone before the window ends", and the window's end is
	// the child's own (win.At below, at least propagation.min after its
	// drain began, which is after sig). The poll therefore allows up to
	// propagation.max, the latest the window may end; gone > win.At below
	// checks the promise against the window that actually ran.
	gone := eventually(t, childtest.PropagationMax, "gone from health/service?passing before the window ends", func() (bool, string) {
		ids, err := passingIDs(c, svc)
		return err == nil && !hasID(ids, id), fmt.Sprint(ids, err)
	})
	var watched time.Duration
	select {
	case at := <-watchGone:
		watched = at.Sub(sig)
	case <-time.After(childtest.PropagationMin):
		t.Fatal("the watch did not see the removal within propagation.min")
	}
	dereg, conf, win := ch.CleanDrain(childtest.Budget + 2*time.Second)
	t.Logf("after SIGTERM: deregistered at %s, confirmed at %s (timeline); gone from ?passing by %s and from the watch by %s (observed); window ended at %s",
		dereg.At, conf.At, gone.Round(time.Millisecond), watched.Round(time.Millisecond), win.At)
	if conf.At > win.At || gone > win.At || watched > win.At {
		t.Fatal("the instance was still passing when the window ended")
	}
	if win.At < childtest.PropagationMin {
		t.Fatalf("window ended at %s, before propagation.min", win.At)
	}
}

// TestChildAgentStoppedBeforeSIGTERM: with the agent gone, the drain still
// completes within its budget and logs the deregistration failure.
func TestChildAgentStoppedBeforeSIGTERM(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	const svc = "agent-down-svc"
	ch := startChild(t, childEnv(a), "--service", svc)
	onlyInstance(t, c, svc, 10*time.Second)
	a.Stop()
	sig := time.Now()
	ch.Cmd.Process.Signal(syscall.SIGTERM)
	ch.DrainRegistryDown(sig, "the agent", "deregistration") // the exit, budget and step checks
	if len(ch.LogLines("consul: deregistration failed; the check turns critical after the TTL")) != 1 {
		t.Fatal("the registrar did not log the deregistration failure")
	}
}

// TestChildKill9: a killed child's check turns critical within the TTL; a new
// process on the same address and port replaces it, never with two passing
// entries, and removes the dead registration.
func TestChildKill9(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	const svc = "kill9-svc"
	addr := childtest.FreeAddr(t)
	first := startChild(t, childEnv(a), "--service", svc, "--http-addr", addr)
	oldID := onlyInstance(t, c, svc, 10*time.Second)

	if err := first.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	first.WaitExit(5 * time.Second)
	critical := eventually(t, testTTL+time.Second, "check critical after kill -9", func() (bool, string) {
		s := checkStatus(c, "service:"+oldID)
		return s == api.HealthCritical, s
	})
	t.Logf("check critical %s after kill -9 (TTL %s)", critical.Round(time.Millisecond), testTTL)
	if critical > testTTL+500*time.Millisecond {
		t.Errorf("critical after %s, later than the TTL %s (+500ms scheduling slack)", critical, testTTL)
	}

	const removedLine = "consul: removed a dead predecessor's registration on this address and port"
	second := startChild(t, childEnv(a), "--service", svc, "--http-addr", addr)
	var newID string
	// The successor logs the removal before it registers, but its log line
	// reaches this test through a pipe and a reader goroutine, which may
	// lag behind what the agent already shows: the passing successor and
	// the line are awaited together (exactly one line is asserted below).
	eventually(t, 10*time.Second, "the successor passing, its removal of the predecessor logged", func() (bool, string) {
		ids, err := passingIDs(c, svc)
		if len(ids) > 1 {
			t.Fatalf("duplicate passing entries: %v", ids)
		}
		lines := len(second.LogLines(removedLine))
		if len(ids) == 1 && ids[0] != oldID {
			newID = ids[0]
			return lines > 0, fmt.Sprintf("successor %s passing; %d removal lines", newID, lines)
		}
		return false, fmt.Sprint(ids, err, "; removal lines ", lines)
	})
	svcs, err := c.Agent().Services()
	if err != nil {
		t.Fatal(err)
	}
	if svcs[oldID] != nil || svcs[newID] == nil || len(svcs) != 1 {
		t.Fatalf("after the successor registered: %v; want only %s", svcs, newID)
	}
	if len(second.LogLines(removedLine)) != 1 {
		t.Fatal("the successor did not log the removal of its predecessor")
	}
}

// TestChildReadinessEject: a failing readiness check ejects the instance and
// its check turns critical; recovery turns it passing again.
func TestChildReadinessEject(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	const svc = "eject-svc"
	flag := filepath.Join(t.TempDir(), "fail")
	startChild(t, childEnv(a), "--service", svc, "--fail-readiness-file", flag)
	id := onlyInstance(t, c, svc, 10*time.Second)
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	took := eventually(t, 5*time.Second, "critical after the readiness check failed", func() (bool, string) {
		ids, _ := passingIDs(c, svc)
		s := checkStatus(c, "service:"+id)
		return s == api.HealthCritical && !hasID(ids, id), s
	})
	t.Logf("critical %s after the readiness check started failing", took.Round(time.Millisecond))
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	took = eventually(t, 5*time.Second, "passing after recovery", func() (bool, string) {
		ids, err := passingIDs(c, svc)
		return hasID(ids, id), fmt.Sprint(ids, err)
	})
	t.Logf("passing again %s after the readiness check recovered", took.Round(time.Millisecond))
}

// TestChildInvalidSettings: out-of-range registry settings, and consul/api
// settings that could only fail later (issue 9 item 4), fail at start (exit
// 2, nothing started) with a message naming the key or variable.
func TestChildInvalidSettings(t *testing.T) {
	for _, c := range []struct{ env, key string }{
		{"DRAINKIT_REGISTRY_DEREGISTER_CRITICAL_SERVICE_AFTER=30s", "registry.deregister_critical_service_after"},
		{"DRAINKIT_REGISTRY_TTL=0s", "registry.ttl"},
		{"DRAINKIT_REGISTRY_HEARTBEAT_INTERVAL=1500ms", "registry.heartbeat_interval"}, // TTL 3s: > TTL/3
		{"CONSUL_CACERT=/nonexistent/drainkit-ca.pem", "CONSUL_CACERT"},
		{"CONSUL_HTTP_ADDR=::::garbage", "CONSUL_HTTP_ADDR"},
	} {
		t.Run(c.key, func(t *testing.T) {
			// No agent is needed: the settings fail before any call.
			env := append(append([]string{"CONSUL_HTTP_ADDR=127.0.0.1:1"}, childTimings...), c.env)
			ch := startChildNoWait(t, env, "--service", "invalid")
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
