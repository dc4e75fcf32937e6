package nacos_test

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/childtest"
)

// TestOperatorOfflineAndOutage runs the two acceptance points that need a
// server restart around one restart (a start costs 30 s or more):
//
//   - an operator's offline (the admin API's enabled=false, as the console
//     does) ejects the instance (cause operator in /state) and survives a
//     server restart and the client's reconnect and re-registration;
//   - with the server stopped, a READY instance keeps serving and
//     registers again when the server returns, and a drain during the
//     outage completes within its budget.
func TestOperatorOfflineAndOutage(t *testing.T) {
	const offSvc, upSvc, drainSvc = "offline-svc", "outage-svc", "outage-drain-svc"
	off := startAdminChild(t, "--registry-service", offSvc)
	up := startChild(t, "--registry-service", upSvc)
	dr := startChild(t, "--registry-service", drainSvc)
	offPort, upPort := childPort(t, off), childPort(t, up)
	waitList(t, adminList, offSvc, offPort, "offline-svc listed", func(_ instance, ok bool) bool { return ok })
	waitList(t, adminList, upSvc, upPort, "outage-svc listed", func(_ instance, ok bool) bool { return ok })
	waitList(t, adminList, drainSvc, childPort(t, dr), "outage-drain-svc listed", func(_ instance, ok bool) bool { return ok })

	offlineEjects(t, off, offSvc, offPort)
	waitList(t, consumerList, offSvc, offPort, "offline instance gone from consumers", func(_ instance, ok bool) bool { return !ok })

	srv.Stop()
	stopped := time.Now()
	// Outage: READY instances keep serving; a drain completes in budget.
	if code := up.Probe("/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz %d with the server down", code)
	}
	resp, err := up.Client.Get("http://" + up.HTTP + "/")
	if err != nil {
		t.Fatalf("not serving with the server down: %v", err)
	}
	resp.Body.Close()
	sig := time.Now()
	dr.Signal(syscall.SIGTERM)
	if code := dr.WaitExit(childtest.Budget + 5*time.Second); code != 0 {
		t.Fatalf("drain during the outage: exit code %d", code)
	}
	if took := dr.ExitAt().Sub(sig); took > childtest.Budget {
		t.Fatalf("drain during the outage took %s, budget %s", took, childtest.Budget)
	} else {
		t.Logf("drain during the outage: exit 0 after %s (budget %s); deregistered step: %+v", took.Round(time.Millisecond), childtest.Budget, dr.TimelineStep("deregistered"))
	}

	srv.Restart(t)
	t.Logf("server restarted %s after the stop (start-up %s)", time.Since(stopped).Round(time.Millisecond), srv.StartupTime.Round(time.Millisecond))
	waitListLong(t, consumerList, upSvc, upPort, "outage-svc registered again after the restart", func(in instance, ok bool) bool { return ok && in.Healthy })
	in := waitListLong(t, adminList, offSvc, offPort, "offline-svc registered again", func(_ instance, ok bool) bool { return ok })
	if in.Enabled {
		t.Fatalf("after the restart and reconnect the operator's offline instance is enabled: %+v", in)
	}
	// Some more rounds of the registrar's read-back: still disabled.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		l, err := consumerList(offSvc)
		if err == nil {
			if _, ok := find(l, offPort); ok {
				t.Fatal("the operator's offline instance is back in consumers' list after the reconnect")
			}
		}
		time.Sleep(200 * time.Millisecond) // poll for a while: the absence must last
	}
	if off.State() != "EJECTED" {
		t.Fatalf("state %s after the reconnect, want EJECTED", off.State())
	}

	// The operator turns it back on: READY and listed again.
	setEnabled(t, offSvc, offPort, true)
	off.WaitState("READY")
	waitList(t, consumerList, offSvc, offPort, "back in consumers' list after the operator's online", func(_ instance, ok bool) bool { return ok })
	for _, c := range []*childtest.Child{off, up} {
		c.Signal(syscall.SIGTERM)
		if code := c.WaitExit(childtest.Budget + 5*time.Second); code != 0 {
			t.Fatalf("exit code %d", code)
		}
	}
}

// waitListLong is waitList with room for a client's reconnect (backoff up
// to a few seconds) after a server restart.
func waitListLong(t *testing.T, list func(string) ([]instance, error), svc string, port int, what string,
	cond func(in instance, found bool) bool) instance {
	t.Helper()
	return waitListWithin(t, 30*time.Second, list, svc, port, what, cond)
}

// offlineEjects takes the child's instance offline as the console does and
// waits until the child reports it EJECTED by operator, its registrar in
// maintenance (one /state answer), with /readyz failing.
func offlineEjects(t *testing.T, ch *childtest.Child, svc string, port int) {
	t.Helper()
	setEnabled(t, svc, port, false)
	ch.WaitFor(10*time.Second, "EJECTED by operator, registrar in maintenance, after the console's offline", func() bool {
		_, body := ch.AdminDo("GET", "/state", nil)
		return containsAll(body, `"state": "EJECTED"`, `"cause": "operator"`, `"health": "maintenance"`)
	})
	if code := ch.Probe("/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz %d while offline", code)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
