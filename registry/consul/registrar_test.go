package consul

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/lifecycle/budget"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/consul/consultest"
	"github.com/hashicorp/consul/api"
)

func tr(to lifecycle.State, cause lifecycle.Cause) lifecycle.Transition {
	return lifecycle.Transition{To: to, Cause: cause, Reason: "test", At: time.Now()}
}

// TestRegisterOnReadyOnly: nothing is registered during warm-up; READY
// registers service and check in one call, passing at once, and the
// heartbeat keeps it passing for longer than the TTL.
func TestRegisterOnReadyOnly(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	o, _ := testOptions(t, a, "ready-only", 18080)
	r := newRegistrar(t, o)
	lc := newLifecycle(t, r, lifecycle.Options{})
	release := make(chan struct{})
	inWarmup := make(chan struct{})
	lc.OnWarmup("gate", func(ctx context.Context) error {
		close(inWarmup)
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	})
	start(t, lc)
	<-inWarmup
	svcs, err := c.Agent().Services()
	if err != nil {
		t.Fatal(err)
	}
	if len(svcs) != 0 {
		t.Fatalf("registered during warm-up: %v", svcs)
	}
	close(release)
	took := eventually(t, 5*time.Second, "passing after READY", func() (bool, string) {
		ids, err := passingIDs(c, o.Service)
		return hasID(ids, r.ID()), fmt.Sprint(ids, err)
	})
	t.Logf("passing %s after warm-up ended", took)
	if lc.State() != lifecycle.Ready {
		t.Fatalf("state %s", lc.State())
	}
	svc, _, err := c.Agent().Service(r.ID(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if svc.Address != "127.0.0.1" || svc.Port != 18080 || svc.Meta[metaManaged] != "true" {
		t.Fatalf("registration %+v", svc)
	}
	checks, err := c.Agent().Checks()
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 1 || checks[r.CheckID()] == nil {
		t.Fatalf("want exactly the TTL check, got %v", checks)
	}

	// Heartbeats keep the check passing well past the TTL.
	deadline := time.Now().Add(testTTL + testTTL/2)
	for time.Now().Before(deadline) {
		if s := checkStatus(c, r.CheckID()); s != api.HealthPassing {
			t.Fatalf("check %s before 1.5 TTL without heartbeat failures", s)
		}
		time.Sleep(100 * time.Millisecond) // polling interval
	}
	st := r.Status()
	if st.Health != registry.Passing || st.Registrations != 1 || st.LastError != "" ||
		time.Since(st.LastWrite) > 2*testHeartbeat {
		t.Fatalf("status %+v", st)
	}
}

// TestEjectMapsToCriticalAndMaintenance: EJECTED by the readiness checks
// sets the TTL check critical and recovery sets it passing; an operator
// eject turns maintenance mode on and Restore turns it off.
func TestEjectMapsToCriticalAndMaintenance(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	o, _ := testOptions(t, a, "eject", 18081)
	r := newRegistrar(t, o)
	var failing atomic.Bool
	lc := newLifecycle(t, r, lifecycle.Options{Checks: budget.CheckOptions{
		Interval: 100 * time.Millisecond, Timeout: 100 * time.Millisecond, FailureThreshold: 2, SuccessThreshold: 3}})
	lc.AddCheck("flip", func(context.Context) error {
		if failing.Load() {
			return errors.New("flipped")
		}
		return nil
	})
	start(t, lc)
	passing := func() (bool, string) {
		ids, err := passingIDs(c, o.Service)
		return hasID(ids, r.ID()) && checkStatus(c, r.CheckID()) == api.HealthPassing, fmt.Sprint(ids, err)
	}
	eventually(t, 5*time.Second, "passing", passing)

	failing.Store(true)
	// The agent shows each write a moment before the registrar has its
	// answer and records it, so the agent's state and the registrar's Status
	// are awaited together.
	took := eventually(t, 5*time.Second, "critical after the checks ejected", func() (bool, string) {
		ids, _ := passingIDs(c, o.Service)
		s, st := checkStatus(c, r.CheckID()), r.Status()
		return s == api.HealthCritical && !hasID(ids, r.ID()) && st.Health == registry.Critical,
			fmt.Sprintf("check %s; state %s, registrar %+v", s, lc.State(), st)
	})
	t.Logf("critical %s after the check started failing", took)
	if lc.State() != lifecycle.Ejected {
		t.Fatalf("state %s, registrar %+v", lc.State(), r.Status())
	}
	failing.Store(false)
	took = eventually(t, 5*time.Second, "passing after recovery", passing)
	t.Logf("passing %s after the check recovered", took)

	maintID := "_service_maintenance:" + r.ID()
	if err := lc.Eject("operator test"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "maintenance after an operator eject", func() (bool, string) {
		ids, _ := passingIDs(c, o.Service)
		m, st := checkStatus(c, maintID), r.Status()
		return m == api.HealthCritical && !hasID(ids, r.ID()) && st.Health == registry.Maintenance,
			fmt.Sprintf("maintenance check %s; registrar %+v", m, st)
	})
	if s := checkStatus(c, r.CheckID()); s != api.HealthPassing {
		t.Fatalf("TTL check %s in maintenance; want passing (never reaped while an operator holds it out); state %s, registrar %+v",
			s, lc.State(), r.Status())
	}
	if err := lc.Restore("operator test"); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "passing after restore", func() (bool, string) {
		ok, d := passing()
		return ok && checkStatus(c, maintID) == "", d
	})
}

// TestReregisterAfterAgentRestart: a dev agent restarted while READY has
// lost the instance; the next heartbeat notices and registers again, within
// two heartbeat periods of the agent being back.
func TestReregisterAfterAgentRestart(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	o, buf := testOptions(t, a, "restart", 18082)
	r := newRegistrar(t, o)
	lc := newLifecycle(t, r, lifecycle.Options{})
	start(t, lc)
	eventually(t, 5*time.Second, "passing", func() (bool, string) {
		ids, err := passingIDs(c, o.Service)
		return hasID(ids, r.ID()), fmt.Sprint(ids, err)
	})
	a.Restart(t)
	took := eventually(t, 2*testHeartbeat+time.Second, "registered again within two heartbeats", func() (bool, string) {
		ids, err := passingIDs(c, o.Service)
		st := r.Status() // recorded a moment after the agent shows it
		return hasID(ids, r.ID()) && st.Registrations == 2 && st.Health == registry.Passing, fmt.Sprint(ids, err, st)
	})
	t.Logf("re-registration latency after the agent was back: %s (heartbeat %s)", took, testHeartbeat)
	if took > 2*testHeartbeat {
		t.Errorf("re-registration took %s, more than two heartbeat periods (%s)", took, 2*testHeartbeat)
	}
	if st := r.Status(); st.Registrations != 2 || st.Health != registry.Passing {
		t.Fatalf("status %+v", st)
	}
	if !strings.Contains(buf.String(), "registering again") {
		t.Fatalf("no log line about the lost instance:\n%s", buf.String())
	}
}

// TestReregisterWhileEjected: the agent loses an EJECTED instance; it comes
// back critical (checks) or in maintenance (operator), and never passes on
// the way.
func TestReregisterWhileEjected(t *testing.T) {
	for _, cause := range []lifecycle.Cause{lifecycle.CauseChecks, lifecycle.CauseOperator} {
		t.Run(string(cause), func(t *testing.T) {
			a := consultest.Start(t)
			c := a.Client(t)
			o, _ := testOptions(t, a, "ejected-restart", 18083)
			r := newRegistrar(t, o)
			ctx := context.Background()
			if err := r.Sync(ctx, tr(lifecycle.Ready, lifecycle.CauseWarmup)); err != nil {
				t.Fatal(err)
			}
			if err := r.Sync(ctx, tr(lifecycle.Ejected, cause)); err != nil {
				t.Fatal(err)
			}
			// Watch the passing list across the restart: the instance must
			// never appear.
			var seen atomic.Bool
			wctx, stop := context.WithCancel(ctx)
			watchDone := make(chan struct{})
			go func() {
				defer close(watchDone)
				_ = Watch(wctx, c, o.Service, WatchOptions{WaitTime: time.Second, MinBackoff: 50 * time.Millisecond}, func(v registry.View) {
					if v.Has(r.ID()) {
						seen.Store(true)
					}
				})
			}()
			a.Restart(t)
			want := registry.Critical
			if cause == lifecycle.CauseOperator {
				want = registry.Maintenance
			}
			eventually(t, 2*testHeartbeat+time.Second, "registered again while ejected", func() (bool, string) {
				svc, _, err := c.Agent().Service(r.ID(), nil)
				st := r.Status()
				return err == nil && svc != nil && st.Registrations == 2 && st.Health == want, fmt.Sprint(st, err)
			})
			if cause == lifecycle.CauseOperator {
				if s := checkStatus(c, "_service_maintenance:"+r.ID()); s != api.HealthCritical {
					t.Fatalf("maintenance check %q after re-registration", s)
				}
			} else if s := checkStatus(c, r.CheckID()); s != api.HealthCritical {
				t.Fatalf("TTL check %q after re-registration", s)
			}
			// One more heartbeat, then stop watching.
			time.Sleep(testHeartbeat) // let a heartbeat run; the watch asserts it stays out
			stop()
			<-watchDone
			if seen.Load() {
				t.Fatal("the ejected instance was passing at some point")
			}
		})
	}
}

// TestDrainDeregistersAndNeverReregisters: the drain deregisters and
// confirms (timeline steps), the heartbeat goroutine stops, and an agent
// restart afterwards does not bring the instance back.
func TestDrainDeregistersAndNeverReregisters(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	o, _ := testOptions(t, a, "drain", 18084)
	r := newRegistrar(t, o)
	lc := newLifecycle(t, r, lifecycle.Options{})
	rn := start(t, lc)
	eventually(t, 5*time.Second, "passing", func() (bool, string) {
		ids, err := passingIDs(c, o.Service)
		return hasID(ids, r.ID()), fmt.Sprint(ids, err)
	})
	if err := lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	// The bound this test asserts is the timeline's (confirmed before the
	// window ended, below); this poll only waits for the agent to show the
	// deregistration, with the same allowance as the other polls here.
	gone := eventually(t, 5*time.Second, "gone from the passing list", func() (bool, string) {
		ids, err := passingIDs(c, o.Service)
		return !hasID(ids, r.ID()), fmt.Sprint(ids, err)
	})
	if err := rn.wait(t, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	tl, _ := lc.Timeline()
	dereg, ok1 := tl.Offset(lifecycle.StepDeregistered)
	conf, ok2 := tl.Offset(lifecycle.StepConfirmed)
	win, _ := tl.Offset(lifecycle.StepWindowEnded)
	if !ok1 || !ok2 {
		t.Fatalf("timeline lacks deregistered/confirmed: %+v", tl.Steps)
	}
	for _, s := range tl.Steps {
		if s.Err != "" {
			t.Fatalf("step %s failed: %s", s.Name, s.Err)
		}
	}
	t.Logf("deregistered at %s, confirmed at %s, window ended at %s (gone seen by the poller %s after Drain)", dereg, conf, win, gone)
	if conf > win {
		t.Fatalf("confirmed (%s) after the window ended (%s)", conf, win)
	}
	if st := r.Status(); st.Health != registry.Absent || !st.Deregistering {
		t.Fatalf("status %+v", st)
	}
	if err := r.Sync(context.Background(), tr(lifecycle.Ready, lifecycle.CauseOperator)); !errors.Is(err, registry.ErrDeregistered) {
		t.Fatalf("Sync after Deregister = %v", err)
	}

	a.Restart(t)
	until := time.Now().Add(3 * testHeartbeat)
	for time.Now().Before(until) {
		svcs, err := c.Agent().Services()
		if err == nil && len(svcs) != 0 {
			t.Fatalf("registered again after the drain: %v", svcs)
		}
		time.Sleep(100 * time.Millisecond) // polling interval
	}
}

// TestDeregisterAgentDown: with the agent gone, Deregister retries with
// backoff and gives up at its deadline with an error; a drain still
// completes on time and records the failure.
func TestDeregisterAgentDown(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	o, buf := testOptions(t, a, "agent-down", 18085)
	r := newRegistrar(t, o)
	lc := newLifecycle(t, r, lifecycle.Options{DeregisterTimeout: time.Second})
	rn := start(t, lc)
	eventually(t, 5*time.Second, "passing", func() (bool, string) {
		ids, err := passingIDs(c, o.Service)
		return hasID(ids, r.ID()), fmt.Sprint(ids, err)
	})
	a.Stop()
	t0 := time.Now()
	if err := lc.Drain("test"); err != nil {
		t.Fatal(err)
	}
	if err := rn.wait(t, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	tm := testTimings()
	budget := tm.PropagationMax + tm.DrainTimeout + tm.StopTimeout
	t.Logf("drain with the agent down took %s (budget %s)", took, budget)
	if took > budget {
		t.Fatalf("drain took %s, over its budget %s", took, budget)
	}
	tl, _ := lc.Timeline()
	var derr string
	for _, s := range tl.Steps {
		if s.Name == lifecycle.StepDeregistered {
			derr = s.Err
			// o.CallTimeout is 0 here (defaults are applied by New): the
			// slack of one call is the one in force.
			if s.Offset > time.Second+r.Options().CallTimeout {
				t.Fatalf("deregistration step at %s, past its 1s bound plus one call (%s)", s.Offset, r.Options().CallTimeout)
			}
		}
	}
	if !strings.Contains(derr, "attempts") {
		t.Fatalf("deregistered step error %q; want the failure with its attempts", derr)
	}
	if !strings.Contains(buf.String(), "deregistration failed") {
		t.Fatalf("registrar did not log the failure:\n%s", buf.String())
	}
	t.Logf("deregistration error: %s", derr)
}

// TestPredecessorsRemoved: earlier drainkit registrations of the same
// service, address and port on the agent are removed before the first
// registration, even while still passing (a predecessor killed less than a
// TTL ago), so there is never a duplicate passing entry. Registrations on
// another port, or not made by drainkit, stay.
func TestPredecessorsRemoved(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	o, buf := testOptions(t, a, "pred", 18086)
	reg := func(id string, port int, managed bool) {
		t.Helper()
		meta := map[string]string{}
		if managed {
			meta[metaManaged] = "true"
		}
		if err := c.Agent().ServiceRegister(&api.AgentServiceRegistration{ID: id, Name: o.Service, Address: "127.0.0.1",
			Port: port, Meta: meta, Check: &api.AgentServiceCheck{CheckID: "service:" + id, TTL: "1h", Status: api.HealthPassing}}); err != nil {
			t.Fatal(err)
		}
	}
	reg("pred-dead", 18086, true)
	reg("pred-other-port", 18087, true)
	reg("not-drainkit", 18086, false)

	var maxPassingOnPort atomic.Int32
	wctx, stop := context.WithCancel(context.Background())
	watchDone := make(chan struct{})
	go func() {
		defer close(watchDone)
		_ = Watch(wctx, c, o.Service, WatchOptions{WaitTime: time.Second}, func(v registry.View) {
			n := int32(0)
			for _, in := range v.Instances {
				if in.Port == 18086 && in.ID != "not-drainkit" {
					n++
				}
			}
			if n > maxPassingOnPort.Load() {
				maxPassingOnPort.Store(n)
			}
		})
	}()
	defer func() { stop(); <-watchDone }()

	r := newRegistrar(t, o)
	if err := r.Sync(context.Background(), tr(lifecycle.Ready, lifecycle.CauseWarmup)); err != nil {
		t.Fatal(err)
	}
	svcs, err := c.Agent().Services()
	if err != nil {
		t.Fatal(err)
	}
	if svcs["pred-dead"] != nil {
		t.Fatal("the dead predecessor on the same address and port is still registered")
	}
	if svcs["pred-other-port"] == nil || svcs["not-drainkit"] == nil || svcs[r.ID()] == nil {
		t.Fatalf("wrong services removed or missing: %v", svcs)
	}
	if !strings.Contains(buf.String(), "predecessor_id=pred-dead") {
		t.Fatalf("no log line for the removed predecessor:\n%s", buf.String())
	}
	// Let the watch catch up with the final state before judging.
	eventually(t, 3*time.Second, "watch sees the new instance", func() (bool, string) {
		return maxPassingOnPort.Load() >= 1, ""
	})
	stop()
	<-watchDone
	if n := maxPassingOnPort.Load(); n > 1 {
		t.Fatalf("%d passing drainkit entries on one address and port at once", n)
	}
}

// TestTokenNeverLogged: the ACL token from the configuration appears in no
// log line and no status, even when every call fails.
func TestTokenNeverLogged(t *testing.T) {
	const token = "tok-6f1d2c0e-SECRET"
	a := consultest.Start(t)
	o, buf := testOptions(t, a, "token", 18088)
	o.Consul.Token = token
	r := newRegistrar(t, o)
	ctx := context.Background()
	if err := r.Sync(ctx, tr(lifecycle.Ready, lifecycle.CauseWarmup)); err != nil {
		t.Fatal(err)
	}
	a.Stop()
	sctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_ = r.Sync(sctx, tr(lifecycle.Ejected, lifecycle.CauseChecks))
	dctx, cancel2 := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel2()
	if err := r.Deregister(dctx); err == nil {
		t.Fatal("Deregister succeeded with the agent down")
	}
	logs := buf.String()
	if !strings.Contains(logs, "level=WARN") {
		t.Fatalf("expected failure logs:\n%s", logs)
	}
	if strings.Contains(logs, token) || strings.Contains(fmt.Sprint(r.Status()), token) {
		t.Fatalf("token leaked:\n%s\n%+v", logs, r.Status())
	}
}

// TestSyncContract: states other than READY and EJECTED are refused; EJECTED
// before READY registers nothing; Sync after Close fails; Deregister without
// a registration does nothing.
func TestSyncContract(t *testing.T) {
	a := consultest.Start(t)
	c := a.Client(t)
	o, _ := testOptions(t, a, "contract", 18089)
	r := newRegistrar(t, o)
	ctx := context.Background()
	if err := r.Sync(ctx, tr(lifecycle.Draining, lifecycle.CauseSignal)); err == nil {
		t.Fatal("Sync(DRAINING) succeeded")
	}
	if err := r.Sync(ctx, tr(lifecycle.Ejected, lifecycle.CauseChecks)); err != nil {
		t.Fatal(err)
	}
	if svcs, _ := c.Agent().Services(); len(svcs) != 0 {
		t.Fatalf("EJECTED before READY registered: %v", svcs)
	}
	if err := r.Deregister(ctx); err != nil {
		t.Fatalf("Deregister without a registration = %v", err)
	}

	r2 := newRegistrar(t, o)
	if err := r2.Sync(ctx, tr(lifecycle.Ready, lifecycle.CauseWarmup)); err != nil {
		t.Fatal(err)
	}
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r2.Sync(ctx, tr(lifecycle.Ready, lifecycle.CauseWarmup)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Sync after Close = %v", err)
	}
	// Close does not deregister: the instance stays until its TTL expires.
	if svc, _, err := c.Agent().Service(r2.ID(), nil); err != nil || svc == nil {
		t.Fatalf("Close deregistered: %v", err)
	}
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
}
