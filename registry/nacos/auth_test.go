package nacos_test

// Issue 30 items 1 and 13: Nacos 3's shipped authentication defaults (the
// client API open, the admin API for admins only) and the full-auth
// variant; the one-line nacos.Register and an operator's offline.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/drainkit/drainkit/internal/nacostest"
	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/lifecycle"
	"github.com/drainkit/drainkit/registry"
	"github.com/drainkit/drainkit/registry/nacos"
)

// registeredWithin is how long after READY a registrar's instance must be in
// the consumers' list: a few of the tests' 500ms sync intervals.
const registeredWithin = 10 * time.Second

// deniedLine is the start of the registrar's one line about the admin API
// denying its read-back.
const deniedLine = "nacos: the admin API denied the read-back"

// TestRegisterShippedAuthDefaults: against Nacos 3.1 with its shipped
// authentication defaults, a registrar without credentials registers (the
// consumers' list shows it, healthy) although the admin API denies its
// read-back with 403; it says so once, naming the status, however many
// read-backs it makes; EJECTED and READY still reach the server.
func TestRegisterShippedAuthDefaults(t *testing.T) {
	const svc = "shipped-auth-svc"
	o := testOptions(t, svc, 18501)
	lg, logs := testlog.New(t, "registrar log")
	o.Logger = lg
	r := newRegistrar(t, o)
	sync(t, r, lifecycle.Ready, lifecycle.CauseChecks)
	waitListWithin(t, registeredWithin, consumerList, svc, 18501, "listed to consumers after READY", func(in instance, ok bool) bool {
		return ok && in.Healthy
	})
	if st := r.Status(); st.Health != registry.Passing || st.Registrations != 1 {
		t.Fatalf("status %+v", st)
	}
	sync(t, r, lifecycle.Ejected, lifecycle.CauseChecks)
	waitList(t, consumerList, svc, 18501, "gone from consumers' list after EJECTED", func(_ instance, ok bool) bool { return !ok })
	sync(t, r, lifecycle.Ready, lifecycle.CauseChecks)
	waitList(t, consumerList, svc, 18501, "back after READY", func(_ instance, ok bool) bool { return ok })
	stillFor(4 * o.SyncInterval) // some more read-backs
	lines := matching(logs.String(), deniedLine)
	if len(lines) != 1 || !strings.Contains(lines[0], "403") || !strings.Contains(lines[0], "registry.nacos.username") {
		t.Fatalf("want one line %q naming the status 403 and the settings to give, got %d:\n%s", deniedLine, len(lines), strings.Join(lines, "\n"))
	}
	if r.OperatorOffline() {
		t.Fatal("operator offline reported")
	}
}

// TestRegisterFullAuth: against the full-auth variant (the client API
// wants a login too), a registrar with a non-admin user's credentials
// registers and deregisters, and its read-back, confirm and Source log in
// with them; the password never appears in its log or status.
func TestRegisterFullAuth(t *testing.T) {
	s := nacostest.StartWith(t, nacostest.Options{Auth: nacostest.FullAuth})
	const svc = "full-auth-svc"
	o := testOptions(t, svc, 18502)
	o.Addrs = []string{s.Addr}
	o.Username, o.Password = s.User, s.Password
	// A login checks a bcrypt hash: on a busy machine a cold server's answer
	// takes longer than the other tests' 500 ms, and the SDK, whose own login
	// has the same timeout, then retries only every 5 s. The defaults.
	o.SyncInterval, o.CallTimeout = nacos.DefaultSyncInterval, nacos.DefaultCallTimeout
	lg, logs := testlog.New(t, "registrar log")
	o.Logger = lg
	r := newRegistrar(t, o)
	// What a consumer of the full-auth server sees: the list with the
	// client user's token.
	list := func(svc string) ([]instance, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		var l struct {
			Hosts []instance `json:"hosts"`
		}
		tok, err := s.Login(ctx, s.User, s.Password)
		if err != nil {
			return nil, err
		}
		err = callServer(s, http.MethodGet, "/v1/ns/instance/list", url.Values{"serviceName": {svc}, "accessToken": {tok}}, &l)
		return l.Hosts, err
	}
	if _, err := consumerListOf(s, svc); err == nil {
		t.Fatal("the full-auth server answered the consumers' list without a token")
	}
	sync(t, r, lifecycle.Ready, lifecycle.CauseChecks)
	waitListWithin(t, registeredWithin, list, svc, 18502, "listed to consumers after READY", func(in instance, ok bool) bool { return ok && in.Healthy })

	views := make(chan registry.View, 16)
	wctx, wcancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- nacos.Watch(wctx, svc, nacos.WatchOptions{Server: nacos.Server{Addrs: []string{s.Addr}, Username: s.User, Password: s.Password},
			NoSubscribe: true, SDKDir: t.TempDir()}, func(v registry.View) { views <- v })
	}()
	v := next(t, views)
	wcancel()
	<-done
	if v.Err != nil || len(v.Instances) != 1 {
		t.Fatalf("the Source's view %+v, want the instance", v)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Deregister(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r.Confirm(ctx); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(logs.String(), s.Password) || strings.Contains(fmt.Sprintf("%+v", r.StatusDetail()), s.Password) {
		t.Fatal("the password is in the registrar's log or status")
	}
}

// consumerListOf reads s's consumers' list anonymously.
func consumerListOf(s *nacostest.Server, svc string) ([]instance, error) {
	var l struct {
		Hosts []instance `json:"hosts"`
	}
	err := callServer(s, http.MethodGet, "/v1/ns/instance/list", url.Values{"serviceName": {svc}}, &l)
	return l.Hosts, err
}

// matching returns the lines of logs that contain sub.
func matching(logs, sub string) []string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return out
}

// TestOneLinerOperatorOffline: a program wired with the one line
// nacos.Register and an admin's credentials reports an operator's offline
// (the admin API's enabled=false, what the console sends) as EJECTED by
// operator, /readyz failing, and READY again when the operator enables it.
func TestOneLinerOperatorOffline(t *testing.T) {
	const svc = "oneliner-offline-svc"
	ch := startAdminChild(t, "--registry-service", svc)
	port := childPort(t, ch)
	waitList(t, consumerList, svc, port, "listed", func(_ instance, ok bool) bool { return ok })
	offlineEjects(t, ch, svc, port)
	setEnabled(t, svc, port, true)
	ch.WaitState("READY")
	if code := ch.Probe("/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz %d after the operator's online", code)
	}
	waitList(t, consumerList, svc, port, "back in consumers' list", func(_ instance, ok bool) bool { return ok })
	if n := len(matchingLines(ch, deniedLine)); n != 0 {
		t.Fatalf("%d lines about a denied admin API with an admin's credentials", n)
	}
}

// TestOneLinerNoAdminAPI: the one-liner without credentials on a server
// with the shipped defaults registers, and says once that an operator's
// offline cannot be observed, and why (the admin API's 403).
func TestOneLinerNoAdminAPI(t *testing.T) {
	const svc = "oneliner-noadmin-svc"
	ch := startChild(t, "--registry-service", svc)
	port := childPort(t, ch)
	waitListWithin(t, registeredWithin, consumerList, svc, port, "listed", func(_ instance, ok bool) bool { return ok })
	ch.WaitFor(10*time.Second, "the line about the admin API", func() bool { return len(matchingLines(ch, deniedLine)) > 0 })
	stillFor(2*nacos.DefaultSyncInterval + time.Second) // two more of the child's read-backs
	lines := matchingLines(ch, deniedLine)
	if len(lines) != 1 || !strings.Contains(lines[0], "403") || !strings.Contains(lines[0], "cannot be observed") {
		t.Fatalf("want one line saying an operator's offline cannot be observed, with the status 403; got:\n%s", strings.Join(lines, "\n"))
	}
}

// stillFor lets d pass: a test that checks something did not happen again
// (one line, however many read-backs) gives it the time to.
func stillFor(d time.Duration) { time.Sleep(d) }

// matchingLines returns the child's log lines that contain sub.
func matchingLines(ch interface{ Logs() string }, sub string) []string {
	return matching(ch.Logs(), sub)
}
