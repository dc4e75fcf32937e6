package drainkit_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/drainkit/drainkit"
	"github.com/drainkit/drainkit/config"
	"github.com/drainkit/drainkit/internal/childtest"
	"github.com/drainkit/drainkit/internal/testlog"
	"github.com/drainkit/drainkit/probes"
)

// started runs the entry point (Run) with an HTTP listener, discarded logs
// and no environment, plus opts, and returns the bound addresses once it has
// started; the test's cleanup drains it and expects exit code 0.
func started(t *testing.T, opts ...drainkit.Option) map[string]net.Addr {
	t.Helper()
	addrs, drain := run(t, append([]drainkit.Option{drainkit.WithLogger(slog.New(slog.DiscardHandler))}, opts...))
	t.Cleanup(drain)
	return addrs
}

// startedLogged runs the entry point like started but with its own default
// logger writing to a buffer, drains it at once after the start, and returns
// everything it wrote.
func startedLogged(t *testing.T, opts ...drainkit.Option) string {
	t.Helper()
	out := &testlog.Buffer{}
	_, drain := run(t, append([]drainkit.Option{drainkit.WithOutput(out)}, opts...))
	drain()
	return out.String()
}

// run starts the entry point with an HTTP listener and no environment, then
// opts, with the propagation window off, and waits for the start. drain
// cancels the run and waits for exit code 0.
func run(t *testing.T, opts []drainkit.Option) (addrs map[string]net.Addr, drain func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrsc := make(chan map[string]net.Addr, 1)
	code := make(chan int, 1)
	opts = append([]drainkit.Option{
		drainkit.WithHTTP("http", ":0", http.NotFoundHandler()),
		drainkit.OnStarted(func(a map[string]net.Addr) { addrsc <- a }),
		drainkit.WithEnv([]string{}),
	}, opts...)
	go func() {
		code <- drainkit.Run(ctx, []string{"--http-addr", "127.0.0.1:0", "--admin-addr", "127.0.0.1:0",
			"--propagation-min", "0s", "--propagation-quiet", "0s", "--propagation-max", "0s"}, opts...)
	}()
	drain = func() {
		cancel()
		select {
		case c := <-code:
			if c != 0 {
				t.Errorf("exit code %d", c)
			}
		case <-time.After(20 * time.Second):
			t.Error("Run did not return within 20s of the drain")
		}
	}
	select {
	case a := <-addrsc:
		return a, drain
	case c := <-code:
		cancel()
		t.Fatalf("Run returned %d before starting", c)
	case <-time.After(15 * time.Second):
		t.Cleanup(drain)
		t.Fatal("no start within 15s")
	}
	return nil, nil
}

// TestAdminSlowClients: 300 clients that hold admin connections (150 idle,
// 150 sending their request a byte every 250ms; more than the connection
// cap) do not delay /readyz: at most 5% of polls take 100 ms longer than a
// control server's (a loaded machine's scheduling), none the half
// ReadHeaderTimeout a starved poll waits, and the server closes the idle
// ones within its ReadHeaderTimeout. The service is examples/minimal, the
// README's program, started through the entry point as a child process
// built without the race detector, as it runs in production.
func TestAdminSlowClients(t *testing.T) {
	limits := drainkit.DefaultAdminLimits()
	bin, remove, err := childtest.Build("github.com/drainkit/drainkit/examples/minimal")
	if err != nil {
		t.Fatal(err)
	}
	defer remove()
	child := childtest.Start(t, bin, []string{"DRAINKIT_PROPAGATION_MIN=0s", "DRAINKIT_PROPAGATION_QUIET=0s", "DRAINKIT_PROPAGATION_MAX=0s"})
	defer func() {
		child.Signal(syscall.SIGTERM)
		if code := child.WaitExit(20 * time.Second); code != 0 {
			t.Errorf("exit code %d", code)
		}
	}()
	admin := child.Admin
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	control := controlServer(t)
	for deadline := time.Now().Add(15 * time.Second); child.Probe("/readyz") != http.StatusOK; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not ready within 15s")
		}
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	closedIn := make(chan time.Duration, 150)
	dialed := make(chan error, 1)
	t0 := time.Now()
	go func() { // the slow clients arrive over about a second, while polled
		for i := range 300 {
			opened := time.Now()
			c, err := net.Dial("tcp", admin)
			if err != nil {
				dialed <- err
				return
			}
			wg.Add(1)
			if i%2 == 0 {
				go func() { defer wg.Done(); closedIn <- idle(c, opened) }()
			} else {
				go func() { defer wg.Done(); trickle(c, stop) }()
			}
			time.Sleep(3 * time.Millisecond)
		}
		dialed <- nil
	}()
	defer func() { close(stop); wg.Wait() }()

	// Each /readyz poll runs alongside the same poll of a control server in
	// this process that no slow client touches: on a machine too loaded to
	// answer any poll in 100 ms, the control is slow too, and only the
	// admin poll's excess over it is the slow clients' doing.
	var worst, worstControl time.Duration
	polls, late := 0, 0
	for after := 0; after < 30; polls++ {
		took, ctl := pollPair(t, client, admin, control)
		worst, worstControl = max(worst, took), max(worstControl, ctl)
		if took > 100*time.Millisecond && took-ctl > 100*time.Millisecond {
			late++
			t.Logf("/readyz took %s (control %s) at %s", took, ctl, time.Since(t0))
		}
		// A poll starved by the slow clients waits for a connection slot
		// until one of them is closed, at the ReadHeaderTimeout (2s) or
		// later; half of it is no scheduling delay.
		if took-ctl > limits.ReadHeaderTimeout/2 {
			t.Errorf("/readyz took %s (control %s) at %s: waited for a slow client to be closed", took, ctl, time.Since(t0))
		}
		select {
		case err := <-dialed:
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			dialed = nil // all 300 open: 30 more polls
		default:
		}
		if dialed == nil {
			after++
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("slowest of %d /readyz polls with up to 300 slow clients: %s (control: %s); %d late", polls, worst, worstControl, late)
	// Starved polls come in runs (every slot is held until the timeout);
	// a loaded machine delays a rare one past the control: allow 5%.
	if late*20 > polls {
		t.Errorf("%d of %d /readyz polls took over 100ms more than the control: the slow clients delay probes", late, polls)
	}
	bound := limits.ReadHeaderTimeout + 2*time.Second // scheduling slack on a loaded machine
	for range 150 {
		if d := <-closedIn; d > bound {
			t.Errorf("an idle connection was closed after %s, want <= %s", d, bound)
		}
	}
}

// controlServer serves /readyz 200 on its own listener, for pollPair.
func controlServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close(); <-done })
	return ln.Addr().String()
}

// pollPair polls /readyz on admin and on control at the same time.
func pollPair(t *testing.T, c *http.Client, admin, control string) (took, ctl time.Duration) {
	t.Helper()
	ctlDone := make(chan time.Duration, 1)
	go func() {
		start := time.Now()
		if resp, err := c.Get("http://" + control + "/readyz"); err == nil {
			resp.Body.Close()
		}
		ctlDone <- time.Since(start)
	}()
	took = pollOnce(t, c, admin)
	return took, <-ctlDone
}

func pollOnce(t *testing.T, c *http.Client, admin string) time.Duration {
	t.Helper()
	start := time.Now()
	resp, err := c.Get("http://" + admin + "/readyz")
	if err != nil {
		t.Fatalf("GET /readyz: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /readyz = %d", resp.StatusCode)
	}
	return time.Since(start)
}

// idle sends nothing and returns when the server closed the connection,
// measured from opened.
func idle(c net.Conn, opened time.Time) time.Duration {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
	_, _ = io.Copy(io.Discard, c)
	return time.Since(opened)
}

// trickle sends a request one byte every 250ms until the server closes the
// connection or stop.
func trickle(c net.Conn, stop <-chan struct{}) {
	defer c.Close()
	req := []byte("GET /readyz HTTP/1.1\r\nHost: x\r\nX-Slow: " + string(bytes.Repeat([]byte("a"), 200)) + "\r\n\r\n")
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for _, b := range req {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if _, err := c.Write([]byte{b}); err != nil {
			return
		}
	}
}

// TestBadSettingsOpenNothing: a bad setting exits 2 with a line naming it
// and its source, and no listener was opened.
func TestBadSettingsOpenNothing(t *testing.T) {
	free := freeAddr(t)
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		opts []drainkit.Option
		want string
	}{
		{"metrics without handler", []string{"DRAINKIT_ADMIN_METRICS=true"}, nil, nil, "env DRAINKIT_ADMIN_METRICS"},
		{"bad duration", []string{"DRAINKIT_PROPAGATION_MIN=banana"}, nil, nil, "DRAINKIT_PROPAGATION_MIN"},
		{"bad listener address", nil, []string{"--http-addr", "nope"}, nil, "--http-addr"},
		{"unknown flag", nil, []string{"--nope"}, nil, "unknown flag: --nope"},
		{"registrar check", nil, nil, []drainkit.Option{drainkit.WithRegistrar("reg", drainkit.Registration{
			Check: func(*config.Config) error { return errors.New("REG_ADDR is not valid") },
		})}, "registrar reg: REG_ADDR is not valid"},
		{"registry setting without a registrar", []string{"DRAINKIT_REGISTRY_ETCD_ENDPOINTS=127.0.0.1:2379"}, nil, nil,
			"registry.etcd.endpoints (from env DRAINKIT_REGISTRY_ETCD_ENDPOINTS) is set, but this program wires no registrar"},
		{"registry flag without a registrar", nil, []string{"--registry-ttl", "10s"}, nil, "unknown flag: --registry-ttl"},
		{"a Consul setting for a program wiring etcd", []string{"DRAINKIT_REGISTRY_TTL=20s"}, nil, []drainkit.Option{
			drainkit.WithRegistrar("etcd", drainkit.Registration{Keys: config.KeysUnder("registry.etcd.")})},
			"registry.ttl (from env DRAINKIT_REGISTRY_TTL) is set, but no registrar this program wires (etcd) reads it"},
		{"listener name with a space", nil, nil, []drainkit.Option{drainkit.WithHTTP("my api", ":0", http.NotFoundHandler())},
			`listener name "my api": want a unique name of letters, digits`},
		{"flag defined twice", nil, nil, []drainkit.Option{drainkit.WithFlags(func(fs *pflag.FlagSet) { fs.Bool("version", false, "") })},
			"WithFlags: svc flag redefined: version"},
		{"admin handler takes over /readyz", nil, nil, []drainkit.Option{
			drainkit.WithAdminHandler("/readyz", http.NotFoundHandler())}, `WithAdminHandler("/readyz"): takes over the probe endpoint GET /readyz`},
		{"admin handler takes over POST /drain", nil, nil, []drainkit.Option{
			drainkit.WithAdminHandler("POST /{action}", http.NotFoundHandler())}, `WithAdminHandler("POST /{action}"): takes over the probe endpoint POST /drain`},
		{"admin handler at the probes' root", nil, nil, []drainkit.Option{
			drainkit.WithAdminHandler("/{path...}", http.NotFoundHandler())}, `the probes are mounted at "/"`},
		{"admin handler twice", nil, nil, []drainkit.Option{drainkit.WithAdminHandler("/metrics", http.NotFoundHandler()),
			drainkit.WithAdminHandler("GET /metrics/", http.NotFoundHandler()),
			drainkit.WithAdminHandler("/metrics", http.NotFoundHandler())}, `WithAdminHandler("/metrics"): pattern "/metrics" conflicts with pattern "/metrics"` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) { refusedAtStart(t, free, tc.env, tc.args, tc.opts, tc.want) })
	}
}

// freeAddr returns a 127.0.0.1 address that was free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close() // free now: Run must not open it
	return held.Addr().String()
}

// refusedAtStart runs a service with env, args and opts, its HTTP and admin
// listeners at free, and checks that it exits 2 with a line naming want,
// having opened no listener.
func refusedAtStart(t *testing.T, free string, env, args []string, opts []drainkit.Option, want string) {
	t.Helper()
	var out bytes.Buffer
	args = append([]string{"--admin-addr", free}, args...)
	opts = append([]drainkit.Option{drainkit.WithHTTP("http", free, http.NotFoundHandler()),
		drainkit.WithEnv(env), drainkit.WithOutput(&out), drainkit.WithName("svc")}, opts...)
	code := drainkit.Run(context.Background(), args, opts...)
	if code != 2 || !bytes.Contains(out.Bytes(), []byte(want)) || !bytes.HasPrefix(out.Bytes(), []byte("svc: ")) {
		t.Errorf("exit %d, output %q: want 2 and a line naming %q", code, out.String(), want)
	}
	if c, err := net.Dial("tcp", free); err == nil {
		c.Close()
		t.Errorf("%s was opened", free)
	}
}

// TestAdminHandlerCannotTakeOverProbes: WithAdminHandler at any endpoint of
// the probes is refused at start (exit 2, no listener opened), naming the
// pattern and the endpoint; /servingz among them, which a handler answering
// 200 would keep passing through a drain. The endpoints are written out
// here, so that one dropped from probes.Routes fails this test; every one
// of probes.Routes is tried too.
func TestAdminHandlerCannotTakeOverProbes(t *testing.T) {
	free := freeAddr(t)
	cases := []struct{ pattern, endpoint string }{
		{"/livez", "GET /livez"},
		{"/readyz", "GET /readyz"},
		{"/startupz", "GET /startupz"},
		{"/servingz", "GET /servingz"},
		{"GET /servingz", "GET /servingz"},
		{"localhost/servingz", "GET /servingz"},
		{"/state", "GET /state"},
		{"POST /drain", "POST /drain"},
		{"/eject", "POST /eject"},
		{"POST /restore", "POST /restore"},
	}
	for _, r := range probes.Routes() {
		cases = append(cases, struct{ pattern, endpoint string }{r.String(), r.String()})
	}
	for _, tc := range cases {
		t.Run(tc.pattern, func(t *testing.T) {
			refusedAtStart(t, free, nil, nil, []drainkit.Option{drainkit.WithAdminHandler(tc.pattern, http.NotFoundHandler())},
				fmt.Sprintf("WithAdminHandler(%q): takes over the probe endpoint %s; mount it elsewhere", tc.pattern, tc.endpoint))
		})
	}
}

// TestAdminAddrInUse: an admin address that cannot be bound exits 2 with a
// line naming admin.addr and where it came from.
func TestAdminAddrInUse(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	var out bytes.Buffer
	code := drainkit.Run(context.Background(), []string{"--admin-addr", held.Addr().String(), "--http-addr", "127.0.0.1:0"},
		drainkit.WithHTTP("http", ":0", http.NotFoundHandler()), drainkit.WithEnv([]string{}),
		drainkit.WithOutput(&out), drainkit.WithName("svc"))
	if want := "svc: admin.addr (from flag --admin-addr): listen tcp " + held.Addr().String(); code != 2 || !bytes.HasPrefix(out.Bytes(), []byte(want)) {
		t.Errorf("exit %d, output %q: want 2 and a line starting %q", code, out.String(), want)
	}
}

func TestVersionFlag(t *testing.T) {
	var out bytes.Buffer
	code := drainkit.Run(context.Background(), []string{"--version"}, drainkit.WithOutput(&out), drainkit.WithName("svc"))
	if code != 0 || !bytes.HasPrefix(out.Bytes(), []byte("svc ")) {
		t.Errorf("exit %d, output %q", code, out.String())
	}
}

// TestAdminConnCap: past AdminLimits.MaxConns the oldest idle connections
// are closed at once (not after a timeout), and a probe still gets through.
func TestAdminConnCap(t *testing.T) {
	limits := drainkit.DefaultAdminLimits()
	limits.MaxConns = 10
	limits.ReadHeaderTimeout = time.Minute // only the cap can close them
	a := started(t, drainkit.WithAdminLimits(limits))
	admin := a["admin"].String()
	closed := make(chan time.Duration, 50)
	var conns []net.Conn
	for range 50 {
		c, err := net.Dial("tcp", admin)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		go func() { closed <- idle(c, time.Now()) }()
	}
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	pollOnce(t, client, admin)
	for range 40 { // 50 idle + the probe over a cap of 10: at least 40 closed
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatal("fewer than 40 idle connections closed within 10s")
		}
	}
	for _, c := range conns {
		c.Close()
	}
	for range 10 {
		<-closed
	}
}
